"""The built-in authorization server in the admin: connected clients and grants are listed
(read-only, no token or hash anywhere), and *Revoke* ends them: the refresh token is refused at
once and the access token on `/mcp` within OAUTH_BUILTIN_REVOCATION_SECONDS (0 here)."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from authserver import services
from authserver.models import Grant, OAuthClient
from protocol import http
from tenants.models import Tenant, TenantKey, TenantMember
from tenants.store import close_connections
from tests.conftest import CANARY_KEY

pytestmark = pytest.mark.django_db(transaction=True)

ISSUER = "http://testserver"
RESOURCE = "http://testserver/mcp"
VERIFIER = "v" * 43
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def builtin(settings):
    settings.MCP_AUTH = ["oauth"]
    settings.MCP_HOSTED = True
    settings.OAUTH_BUILTIN = True
    settings.OAUTH_RESOURCE = RESOURCE
    settings.OAUTH_BUILTIN_REVOCATION_SECONDS = 0
    http.mcp_endpoint.cache_clear()
    yield settings
    http.mcp_endpoint.cache_clear()
    close_connections()  # the tenants' pool threads' connections (PostgreSQL drops the test database after)


def person(name: str, tenant: Tenant):
    user = get_user_model().objects.create_user(name)  # no password: signing in is not tested here
    TenantMember.objects.create(user=user, tenant=tenant)
    return user


def tenant(name: str) -> Tenant:
    made = Tenant.objects.create(name=name, claim=name.lower())
    key = TenantKey(tenant=made, label="main")
    key.set_key(CANARY_KEY)
    key.save()
    return made


def signed_in(client: OAuthClient, user, at: Tenant) -> services.TokenSet:
    """A person's consent and the code exchanged for tokens, as the endpoints do it."""
    from authlib.oauth2.rfc7636 import create_s256_code_challenge

    redirect = client.redirect_uris[0]
    code = services.issue_code(
        client=client,
        user=user,
        tenant=at,
        redirect_uri=redirect,
        code_challenge=create_s256_code_challenge(VERIFIER),
        resource=RESOURCE,
    )
    return services.exchange_code(
        code=code, client_id=client.client_id, redirect_uri=redirect, verifier=VERIFIER, issuer=ISSUER
    )


def listing(token: str):
    return Client().post(
        "/mcp",
        json.dumps(LIST),
        content_type="application/json",
        headers={**ACCEPT, "Host": "testserver", "Authorization": f"Bearer {token}"},
    )


@pytest.fixture
def world(builtin):
    acme, globex = tenant("Acme"), tenant("Globex")
    ada, bob = person("ada", acme), person("bob", globex)
    claude = services.register_client(
        {"client_name": "Claude", "redirect_uris": ["https://claude.ai/api/mcp/auth_callback"]}
    )
    vscode = services.register_client(
        {
            "client_name": "Visual Studio Code",
            "redirect_uris": ["http://127.0.0.1:33418/", "https://vscode.dev/redirect"],
        }
    )
    tokens = {
        "ada-claude": signed_in(claude, ada, acme),
        "ada-vscode": signed_in(vscode, ada, acme),
        "bob-claude": signed_in(claude, bob, globex),
    }
    return {"claude": claude, "vscode": vscode, "ada": ada, "bob": bob, "acme": acme, "tokens": tokens}


def test_the_client_list_shows_kind_hosts_and_live_grants_and_no_secret(admin_client, world):
    page = admin_client.get("/admin/authserver/oauthclient/").content.decode()
    claude_row = page.split(">Claude</a>", 1)[1].split("</tr>", 1)[0]
    assert "registered itself (RFC 7591)" in claude_row
    assert world["claude"].client_id in claude_row
    assert "claude.ai" in claude_row
    assert '<td class="field-live_grants">2</td>' in claude_row
    vscode_row = page.split(">Visual Studio Code</a>", 1)[1].split("</tr>", 1)[0]
    assert "127.0.0.1, vscode.dev" in vscode_row
    detail = admin_client.get(f"/admin/authserver/oauthclient/{world['claude'].pk}/change/").content.decode()
    for answer in world["tokens"].values():
        assert answer.access_token not in page + detail
        assert answer.refresh_token not in page + detail
    assert world["claude"].client_id in detail and "https://claude.ai/api/mcp/auth_callback" in detail
    assert 'name="name"' not in detail, "read-only: no form field to edit"


def test_grants_filter_by_tenant_person_client_and_state(admin_client, world):
    def users(query: str) -> list[str]:
        page = admin_client.get(f"/admin/authserver/grant/?{query}").content.decode()
        return sorted(re.findall(r'class="field-user[^"]*"><a [^>]*>(\w+)</a>', page))

    assert users("") == ["ada", "ada", "bob"]
    assert users(f"tenant__id__exact={world['acme'].pk}") == ["ada", "ada"]
    assert users(f"user__id__exact={world['bob'].pk}") == ["bob"]
    assert users(f"client__id__exact={world['vscode'].pk}") == ["ada"]
    assert users("state=revoked") == []
    assert users("state=live") == ["ada", "ada", "bob"]


def test_nothing_can_be_added_changed_or_deleted_by_hand(admin_client, world):
    assert admin_client.get("/admin/authserver/oauthclient/add/").status_code == 403
    assert admin_client.get("/admin/authserver/grant/add/").status_code == 403
    grant = Grant.objects.first()
    assert admin_client.get(f"/admin/authserver/grant/{grant.pk}/delete/").status_code == 403
    actions = admin_client.get("/admin/authserver/grant/").content.decode()
    assert 'value="revoke"' in actions and 'value="delete_selected"' not in actions
    assert admin_client.get("/admin/authserver/authorizationcode/").status_code == 404
    assert admin_client.get("/admin/authserver/refreshtoken/").status_code == 404


def test_revoking_a_grant_refuses_its_tokens_and_leaves_the_others(admin_client, world):
    tokens = world["tokens"]
    assert listing(tokens["ada-claude"].access_token).status_code == 200
    grant = Grant.objects.get(user=world["ada"], client=world["claude"])
    page = admin_client.post(
        "/admin/authserver/grant/", {"action": "revoke", "_selected_action": [str(grant.pk)]}, follow=True
    )
    assert "Revoked 1 grant(s)." in page.content.decode()
    assert listing(tokens["ada-claude"].access_token).status_code == 401
    refused = Client().post(
        "/oauth/token",
        {
            "grant_type": "refresh_token",
            "refresh_token": tokens["ada-claude"].refresh_token,
            "client_id": world["claude"].client_id,
        },
    )
    assert (refused.status_code, refused.json()["error"]) == (400, "invalid_grant")
    assert listing(tokens["ada-vscode"].access_token).status_code == 200
    assert listing(tokens["bob-claude"].access_token).status_code == 200
    live = admin_client.get("/admin/authserver/grant/?state=live").content.decode()
    assert str(grant.pk) not in live and live.count('name="_selected_action"') == 2


def test_revoking_a_client_ends_every_grant_it_holds(admin_client, world):
    tokens = world["tokens"]
    claude = world["claude"]
    page = admin_client.post(
        "/admin/authserver/oauthclient/", {"action": "revoke", "_selected_action": [str(claude.pk)]}, follow=True
    )
    assert "Revoked 1 client(s)" in page.content.decode()
    claude.refresh_from_db()
    assert claude.revoked_at is not None
    assert Grant.objects.filter(client=claude, revoked_at__isnull=True).count() == 0
    assert listing(tokens["ada-claude"].access_token).status_code == 401
    assert listing(tokens["bob-claude"].access_token).status_code == 401
    assert listing(tokens["ada-vscode"].access_token).status_code == 200
    row = admin_client.get("/admin/authserver/oauthclient/").content.decode().split(">Claude</a>", 1)[1]
    assert '<td class="field-live_grants">0</td>' in row.split("</tr>", 1)[0]


def test_staff_without_the_change_permission_see_no_revoke_action(client, world):
    from django.contrib.auth.models import Permission

    viewer = get_user_model().objects.create_user("viewer", is_staff=True)
    viewer.user_permissions.add(*Permission.objects.filter(codename__in=["view_grant", "view_oauthclient"]))
    client.force_login(viewer)
    page = client.get("/admin/authserver/grant/").content.decode()
    assert ">ada</a>" in page and 'value="revoke"' not in page
    grant = Grant.objects.first()
    client.post("/admin/authserver/grant/", {"action": "revoke", "_selected_action": [str(grant.pk)]})
    grant.refresh_from_db()
    assert grant.revoked_at is None


def test_a_tenants_page_lists_its_people_with_a_link_to_their_grants(admin_client, world):
    page = admin_client.get(f"/admin/tenants/tenant/{world['acme'].pk}/change/").content.decode()
    assert "People signing in (built-in OAuth)" in page
    assert f'/admin/authserver/grant/?user__id__exact={world["ada"].pk}"' in page
    assert "bob" not in page.split("People signing in", 1)[1].split("</fieldset>", 1)[0]
