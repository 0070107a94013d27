"""The authorization server's tables: clients, grants, authorization codes, refresh tokens and
the registration rate buckets.

Codes and refresh tokens are stored only as SHA-256 hashes (a database dump hands out no live
credential); access tokens are not stored at all (authserver.tokens signs and verifies them).
A `Grant` is one person's consent to one client: every code, refresh token and access token
names it, so revoking the grant ends them all (access tokens within OAUTH_BUILTIN_REVOCATION_SECONDS).
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

CLIENT_ID_LENGTH = 2048
NAME_LENGTH = 200
URI_LENGTH = 2048
SCOPE_LENGTH = 200
HASH_LENGTH = 64


class OAuthClient(models.Model):
    """A client application: registered through RFC 7591 (a random id) or known by its Client ID
    Metadata Document (the https URL is the id; the fetched document is cached here)."""

    REGISTERED = "registered"
    METADATA_DOCUMENT = "metadata_document"
    KINDS = [(REGISTERED, "registered itself (RFC 7591)"), (METADATA_DOCUMENT, "metadata document (CIMD)")]

    client_id = models.CharField(max_length=CLIENT_ID_LENGTH, unique=True)
    kind = models.CharField(max_length=20, choices=KINDS)
    name = models.CharField(max_length=NAME_LENGTH)
    redirect_uris = models.JSONField(default=list)
    client_uri = models.CharField(max_length=URI_LENGTH, blank=True)
    metadata = models.JSONField(default=dict, blank=True, help_text="The accepted registration or fetched document.")
    fetched_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "OAuth client"

    def __str__(self) -> str:
        return f"{self.name} ({self.get_kind_display()})"


class Grant(models.Model):
    """One person's consent to one client, acting as one tenant, for one resource."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    client = models.ForeignKey(OAuthClient, on_delete=models.CASCADE, related_name="grants")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="oauth_grants")
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="oauth_grants")
    scope = models.CharField(max_length=SCOPE_LENGTH)
    resource = models.CharField(max_length=URI_LENGTH)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["revoked_at"], name="authserver_grant_revoked")]

    def __str__(self) -> str:
        return f"{self.user} -> {self.client.name}"


class AuthorizationCode(models.Model):
    code_hash = models.CharField(max_length=HASH_LENGTH, unique=True)
    grant = models.ForeignKey(Grant, on_delete=models.CASCADE, related_name="codes")
    client = models.ForeignKey(OAuthClient, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    redirect_uri = models.CharField(max_length=URI_LENGTH)
    code_challenge = models.CharField(max_length=128)
    resource = models.CharField(max_length=URI_LENGTH)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)


class RefreshToken(models.Model):
    token_hash = models.CharField(max_length=HASH_LENGTH, unique=True)
    grant = models.ForeignKey(Grant, on_delete=models.CASCADE, related_name="refresh_tokens")
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    replaced_by = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replaces"
    )


class RateBucket(models.Model):
    """A fixed-window counter shared by every replica (authserver.ratelimit)."""

    key = models.CharField(max_length=100, primary_key=True)
    window = models.BigIntegerField()
    count = models.PositiveIntegerField()
