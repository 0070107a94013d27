"""The built-in authorization server in the admin: which clients are connected, who granted
them what, and revoking either.

Read-only pages: clients register themselves (RFC 7591) or are fetched from their metadata
documents (authserver.cimd), grants are made by a person's consent. The only change staff make
is *Revoke*, an action that calls authserver.services (the one write path), so a revoked grant's
refresh tokens die at once and its access tokens within OAUTH_BUILTIN_REVOCATION_SECONDS on
every replica. No code, token or hash is shown anywhere: codes and refresh tokens are not
registered here at all.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import admin, messages
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest

from authserver import services
from authserver.models import Grant, OAuthClient


class ReadOnlyAdmin(admin.ModelAdmin):
    """Nothing added, changed or deleted by hand: the change page only shows the row."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def revocation_text() -> str:
    return (
        "Refresh tokens are refused at once; access tokens already issued are refused by every replica within "
        f"{settings.OAUTH_BUILTIN_REVOCATION_SECONDS:g} s (OAUTH_BUILTIN_REVOCATION_SECONDS)."
    )


class LiveFilter(admin.SimpleListFilter):
    """Live (not revoked) or revoked rows."""

    title = "state"
    parameter_name = "state"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("live", "live"), ("revoked", "revoked")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "live":
            return queryset.filter(revoked_at__isnull=True)
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        return queryset


@admin.register(OAuthClient)
class OAuthClientAdmin(ReadOnlyAdmin):
    list_display = ("name", "kind", "client_id", "redirect_hosts", "live_grants", "created_at", "revoked_at")
    list_filter = (LiveFilter, "kind")
    search_fields = ("name", "client_id")
    actions = ["revoke"]
    fields = (
        "name",
        "kind",
        "client_id",
        "client_uri",
        "redirect_uris",
        "metadata",
        "fetched_at",
        "expires_at",
        "created_at",
        "revoked_at",
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[OAuthClient]:
        live = Q(grants__revoked_at__isnull=True)
        return super().get_queryset(request).annotate(live_grant_count=Count("grants", filter=live))

    @admin.display(description="live grants", ordering="live_grant_count")
    def live_grants(self, client: OAuthClient) -> int:
        count = getattr(client, "live_grant_count", None)
        return client.grants.filter(revoked_at__isnull=True).count() if count is None else count

    @admin.display(description="redirect hosts")
    def redirect_hosts(self, client: OAuthClient) -> str:
        """The hosts a sign-in may return to: whom a person's code is sent to."""
        hosts = dict.fromkeys(urlsplit(uri).hostname or "?" for uri in client.redirect_uris if isinstance(uri, str))
        return ", ".join(hosts)

    @admin.action(description="Revoke the selected clients and all their grants", permissions=["revoke"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[OAuthClient]) -> None:
        clients = list(queryset.filter(revoked_at__isnull=True))
        for client in clients:
            services.revoke_client(client)
        self.message_user(
            request,
            f"Revoked {len(clients)} client(s): they can sign no one in. {revocation_text()}",
            messages.SUCCESS,
        )

    def has_revoke_permission(self, request: HttpRequest) -> bool:
        """Revoking is the one change: staff with the change permission (superusers have it)."""
        return request.user.has_perm("authserver.change_oauthclient")


@admin.register(Grant)
class GrantAdmin(ReadOnlyAdmin):
    list_display = ("user", "tenant", "client", "scope", "created_at", "last_used_at", "revoked_at")
    list_filter = (
        LiveFilter,
        "tenant",
        ("client", admin.RelatedOnlyFieldListFilter),
        ("user", admin.RelatedOnlyFieldListFilter),
    )
    list_select_related = ("user", "tenant", "client")
    search_fields = ("user__username", "user__email", "client__name", "tenant__name")
    actions = ["revoke"]
    fields = ("id", "user", "tenant", "client", "scope", "resource", "created_at", "last_used_at", "revoked_at")

    @admin.action(
        description="Revoke the selected grants (the client must ask the person again)", permissions=["revoke"]
    )
    def revoke(self, request: HttpRequest, queryset: QuerySet[Grant]) -> None:
        grants = list(queryset.filter(revoked_at__isnull=True).select_related("client"))
        for grant in grants:
            services.revoke_grant(grant, reason="admin")
        self.message_user(request, f"Revoked {len(grants)} grant(s). {revocation_text()}", messages.SUCCESS)

    def has_revoke_permission(self, request: HttpRequest) -> bool:
        """Revoking is the one change: staff with the change permission (superusers have it)."""
        return request.user.has_perm("authserver.change_grant")
