"""A tenant is an organisation signing in with OAuth: matched from one claim of its access
tokens (`OAUTH_TENANT_CLAIM`), it spends its own TomTom keys within its own quotas.

The keys are stored encrypted (tenants.crypto) and never shown again: the admin shows a
fingerprint. The newest active key is the one used; rotating a key is adding the new one and
deactivating the old. `TenantUsage` is the quota counter every replica shares (tenants.store).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from tenants import crypto

BACKENDS = [("tomtom-orbis-maps", "TomTom Orbis Maps"), ("tomtom-maps", "TomTom Maps")]


class Tenant(models.Model):
    name = models.CharField(max_length=100, unique=True, help_text="Shown in the call log as `tenant`.")
    claim = models.CharField(
        "claim value",
        max_length=255,
        unique=True,
        help_text="The value of the token claim named by OAUTH_TENANT_CLAIM (e.g. the `sub` or organisation id).",
    )
    enabled = models.BooleanField(default=True, help_text="Untick to refuse this tenant's calls at once.")
    default_backend = models.CharField(
        max_length=32, choices=BACKENDS, blank=True, help_text="Empty: the server's TOMTOM_MAPS_BACKEND."
    )
    allowed_tools = models.JSONField(
        default=list, blank=True, help_text="Tool names this tenant may call; empty: every tool."
    )
    calls_per_minute = models.PositiveIntegerField(null=True, blank=True, help_text="Empty: no limit.")
    calls_per_day = models.PositiveIntegerField(null=True, blank=True, help_text="Empty: no limit (UTC days).")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class TenantKey(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="keys")
    label = models.CharField(max_length=100, blank=True)
    secret = models.TextField(editable=False, help_text="The TomTom key, Fernet-encrypted.")
    fingerprint = models.CharField(max_length=12, editable=False)
    active = models.BooleanField(default=True, help_text="The newest active key is the one used.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "TomTom key"

    def __str__(self) -> str:
        return f"{self.label or 'key'} ({self.fingerprint})"

    def __repr__(self) -> str:  # never the key, not even encrypted
        return f"<TenantKey {self.pk} {self.fingerprint}>"

    def set_key(self, plain: str) -> None:
        self.secret = crypto.encrypt(plain)
        self.fingerprint = crypto.fingerprint(plain)


class TenantUsage(models.Model):
    """Calls admitted in the current minute and UTC day (bucket numbers: epoch seconds // 60, // 86400)."""

    tenant = models.OneToOneField(Tenant, on_delete=models.CASCADE, primary_key=True, related_name="usage")
    minute = models.BigIntegerField()
    minute_calls = models.PositiveIntegerField()
    day = models.BigIntegerField()
    day_calls = models.PositiveIntegerField()

    class Meta:
        verbose_name_plural = "tenant usage"


class TenantMember(models.Model):
    """A person (a Django user) who signs in through the built-in authorization server acts as
    this tenant: its key, allow-list and quotas apply to their calls (authserver, OAUTH_BUILTIN)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="tenant_membership")
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="members")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["tenant", "user"]
        verbose_name = "member"

    def __str__(self) -> str:
        return f"{self.user} ({self.tenant})"
