"""An enabled tenant without an active TomTom key is shown as such in the admin: in the list and
on its page (every tool call it makes is refused `unauthorized`; check tenants.W002)."""

from __future__ import annotations

import pytest

from tenants.models import Tenant, TenantKey
from tests.conftest import CANARY_KEY

pytestmark = pytest.mark.django_db

WARNING = "Acme is enabled but has no active TomTom key: every tool call it makes is refused `unauthorized`"


def test_an_enabled_tenant_without_a_key_is_warned_about_in_the_list_and_on_its_page(admin_client):
    acme = Tenant.objects.create(name="Acme", claim="acme", enabled=True)
    Tenant.objects.create(name="Paused", claim="paused", enabled=False)
    keyed = Tenant.objects.create(name="Keyed", claim="keyed", enabled=True)
    key = TenantKey(tenant=keyed, label="main", active=True)
    key.set_key(CANARY_KEY)
    key.save()
    listing = admin_client.get("/admin/tenants/tenant/").content.decode()
    assert listing.count("0: enabled without a key") == 1
    row = listing.split(">Acme</a>", 1)[1].split("</tr>", 1)[0]
    assert "0: enabled without a key" in row
    page = admin_client.get(f"/admin/tenants/tenant/{acme.pk}/change/").content.decode()
    assert WARNING in page and CANARY_KEY not in page
    assert (
        WARNING.replace("Acme", "Keyed")
        not in admin_client.get(f"/admin/tenants/tenant/{keyed.pk}/change/").content.decode()
    )
    paused = Tenant.objects.get(name="Paused")
    assert (
        "has no active TomTom key"
        not in admin_client.get(f"/admin/tenants/tenant/{paused.pk}/change/").content.decode()
    )
