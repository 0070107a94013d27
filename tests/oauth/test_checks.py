"""The sign-in system checks (tenants/checks.py), compared as message objects."""

from __future__ import annotations

import pytest
from django.core import checks

from tenants.checks import check_sign_in


@pytest.fixture
def oauth(settings):
    settings.MCP_AUTH = ["oauth"]
    settings.OAUTH_ISSUER = "https://login.example.com/realms/maps"
    settings.OAUTH_JWKS_URL = "https://login.example.com/realms/maps/certs"
    settings.OAUTH_RESOURCE = "https://mcp.example.com/mcp"
    settings.MCP_PATH = "/mcp"
    return settings


def test_a_coherent_setup_has_no_issue(oauth):
    assert check_sign_in() == []


@pytest.mark.parametrize(
    ("name", "value", "least"),
    [
        ("OAUTH_JWKS_CACHE_SECONDS", 0, 1),  # keys stale as soon as fetched: with no staleness, never usable
        ("OAUTH_JWKS_CACHE_SECONDS", 604_801, 1),
        ("OAUTH_JWKS_MAX_STALE_SECONDS", -1, 0),
        ("OAUTH_JWKS_MAX_STALE_SECONDS", 604_801, 0),
    ],
)
def test_key_ages_outside_their_range_are_refused(oauth, name, value, least):
    setattr(oauth, name, value)
    assert check_sign_in() == [
        checks.Error(
            f"{name} must be from {least} to 604800 seconds (a week), not {value}.",
            hint="the defaults: 300 and 3600 (docs/oauth.md, Signing keys)",
            id="tenants.E005",
        )
    ]


@pytest.mark.parametrize(("cache", "stale"), [(1, 0), (604_800, 604_800)])
def test_key_ages_at_the_bounds_are_allowed(oauth, cache, stale):
    oauth.OAUTH_JWKS_CACHE_SECONDS = cache
    oauth.OAUTH_JWKS_MAX_STALE_SECONDS = stale
    assert check_sign_in() == []
