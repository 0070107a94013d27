"""`manage.py check` refuses a TomTom client limit with which no call could be answered
(`tomtom_mcp.E005`), naming the setting and what to set instead."""

from __future__ import annotations

import pytest
from django.core.checks import Error
from django.test import override_settings

from tomtom_mcp.checks import TOMTOM_LIMITS, check_tomtom_limits


def test_the_defaults_pass():
    assert check_tomtom_limits() == []


@pytest.mark.parametrize(
    ("name", "value", "what"),
    [
        ("TOMTOM_MAX_CONNECTIONS", 0, "at least 1"),
        ("TOMTOM_TIMEOUT", 0.0, "seconds above 0"),
        ("TOMTOM_MAX_HEADER_BYTES", 100, "at least 1024 bytes"),
        ("TOMTOM_MAX_RETRIES", -1, "0 or more"),
    ],
)
def test_a_limit_no_call_could_live_with_is_an_error_naming_it(name, value, what):
    with override_settings(**{name: value}):
        assert check_tomtom_limits() == [
            Error(
                f"{name} is {value!r}: it must be {what}.",
                hint=f"Set {name} to {what}, or unset it for its default (README, Configuration).",
                obj=name,
                id="tomtom_mcp.E005",
            )
        ]


def test_every_limit_checked_is_a_documented_setting():
    from tests.conftest import REPO

    readme = (REPO / "README.md").read_text()
    assert [name for name in TOMTOM_LIMITS if f"| `{name}` |" not in readme] == []
