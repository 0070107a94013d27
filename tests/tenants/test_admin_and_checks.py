"""Tenants as product staff keep them: an allow-list holds only tools the server offers, and a
tenant that is enabled without a key is reported."""

from __future__ import annotations

from datetime import date

import pytest
from django.core import checks as django_checks

from governance import services
from tenants.checks import check_tenants
from tenants.models import Tenant, TenantKey
from tenants.tool_names import allow_list_problems
from tests.conftest import CANARY_KEY

pytestmark = pytest.mark.django_db


def tenant_form(**overrides: str) -> dict[str, str]:
    return {
        "name": "Acme",
        "claim": "acme",
        "enabled": "on",
        "default_backend": "",
        "allowed_tools": "",
        "calls_per_minute": "",
        "calls_per_day": "",
        "keys-TOTAL_FORMS": "1",
        "keys-INITIAL_FORMS": "0",
        "keys-MIN_NUM_FORMS": "0",
        "keys-MAX_NUM_FORMS": "1000",
        "keys-0-label": "first",
        "keys-0-new_key": CANARY_KEY,
        "keys-0-active": "on",
        "members-TOTAL_FORMS": "0",  # the people signing in (built-in OAuth): none here
        "members-INITIAL_FORMS": "0",
        "members-MIN_NUM_FORMS": "0",
        "members-MAX_NUM_FORMS": "1000",
        **overrides,
    }


def test_the_allow_list_refuses_a_typo_and_names_the_tool_meant(admin_client):
    page = admin_client.post("/admin/tenants/tenant/add/", tenant_form(allowed_tools="tomtom-geocode, tomtom-routng"))
    assert page.status_code == 200  # the form again, nothing saved
    assert "tomtom-routng: no tool has this name; did you mean tomtom-routing?" in page.content.decode()
    assert not Tenant.objects.exists()
    saved = admin_client.post("/admin/tenants/tenant/add/", tenant_form(allowed_tools="tomtom-geocode tomtom-routing"))
    assert saved.status_code == 302
    assert Tenant.objects.get().allowed_tools == ["tomtom-geocode", "tomtom-routing"]


def test_the_allow_list_refuses_retired_names_and_aliases_with_the_tool_to_allow():
    services.ledger_add(name="tomtom-search", first_seen=date(2025, 6, 30))
    services.alias_create(name="tomtom-search", target="tomtom-fuzzy-search")
    assert allow_list_problems(["tomtom-static-map", "tomtom-search", "tomtom-geocode", "nonsense"]) == [
        "tomtom-static-map: retired: allow tomtom-dynamic-map or tomtom-map-image.",
        "tomtom-search: an old name of tomtom-fuzzy-search: allow tomtom-fuzzy-search.",
        "nonsense: no tool has this name.",
    ]


def test_w002_an_enabled_tenant_without_a_key():
    keyless = Tenant.objects.create(name="Keyless", claim="keyless")
    Tenant.objects.create(name="Off", claim="off", enabled=False)
    keyed = Tenant.objects.create(name="Keyed", claim="keyed")
    key = TenantKey(tenant=keyed)
    key.set_key(CANARY_KEY)
    key.save()
    retired_key = TenantKey(tenant=keyless, active=False)
    retired_key.set_key(CANARY_KEY)
    retired_key.save()
    assert check_tenants(databases=["default"]) == [
        django_checks.Warning(
            "Tenant Keyless is enabled but has no active TomTom key: every tool call it makes is refused "
            "`unauthorized`.",
            hint="Add its key in the admin (Tenants -> the tenant -> TomTom keys), or untick `enabled`.",
            obj="Keyless",
            id="tenants.W002",
        )
    ]
    assert check_tenants(databases=None) == []  # only with --database


def test_w003_an_allow_list_saved_before_the_rule():
    acme = Tenant.objects.create(name="Acme", claim="acme", allowed_tools=["tomtom-routng"], enabled=False)
    [warning] = check_tenants(databases=["default"])
    assert (warning.id, warning.obj) == ("tenants.W003", acme.name)
    assert warning.msg == (
        "Tenant Acme's allow-list names tools the server does not offer: tomtom-routng: no tool has this name; "
        "did you mean tomtom-routing?"
    )
