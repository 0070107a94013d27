"""Client ID Metadata Documents: a client whose `client_id` is an https URL publishes its
metadata there, and we fetch it instead of asking it to register (MCP authorization 2025-11-25,
draft-ietf-oauth-client-id-metadata-document; docs/adr/0050-built-in-authorization-server.md).

`resolve_metadata_client(client_id)` returns the `OAuthClient` row (kind `metadata_document`)
for that URL, or raises `OAuthError("invalid_client", <why>)`:

- the URL: `https`, a host, a path other than `/`, no user name or password, no fragment, no
  `.` or `..` segment, printable ASCII only, at most 2,048 characters (draft §3);
- the fetch: through `tools.download` (public addresses only, pinned against DNS rebinding, no
  redirects, 200 only, `timeout` seconds) and at most `OAUTH_CLIENT_METADATA_MAX_BYTES` (5 KiB by
  default, the draft's suggested bound); the document's private ranges are never opened: anyone
  can make us fetch a URL by starting a sign-in;
- the document: a JSON object whose `client_id` equals the URL exactly (simple string
  comparison, no normalising); no `client_secret` and no shared-secret authentication
  (`token_endpoint_auth_method` absent or `none`); `redirect_uris` 1 to 10 https URLs (or loopback
  http, RFC 8252) of at most 2,048 characters without a fragment; `client_name` at most 200
  characters; `client_uri` an https URL; `grant_types`/`response_types`, when given, allowing
  the authorization code flow;
- the cache: the row serves while `expires_at` is ahead (`Cache-Control: max-age` clamped to
  5 minutes .. 24 hours; 1 hour when the answer says nothing). Past it the document is fetched
  again, and a failed fetch refuses the client (naming why) rather than using stale metadata; a
  client revoked in the admin stays refused, whatever its document says;
- the fetch rate: at most `FETCHES_PER_HOST_PER_MINUTE` fetches per host per minute, counted by
  every replica together (authserver.ratelimit): any visitor can name a URL, and refused
  documents are not cached, so this keeps us from being made to hammer a host.

`logo_uri` is kept in the stored document but never shown: the consent page loads no
third-party images.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from urllib.parse import SplitResult, urlsplit

import orjson
from asgiref.sync import async_to_sync
from django.conf import settings
from django.utils import timezone

from authserver import ratelimit, services
from authserver.errors import OAuthError
from authserver.models import OAuthClient
from authserver.redirects import redirect_uri_problem
from core.errors import ToolError
from core.events import ERROR_TEXT_LENGTH, clip, log
from core.operations import OAuthClientRefused
from tools.download import ARGUMENT, Downloaded, DownloadPolicy, download_with_headers

MAX_URL_LENGTH = 2048
MAX_NAME_LENGTH = 200
MAX_REDIRECT_URIS = 10
MAX_SCOPE_LENGTH = 1000
DEFAULT_MAX_BYTES = 5 * 1024
FETCH_TIMEOUT_SECONDS = 5.0
MIN_CACHE_SECONDS = 5 * 60
MAX_CACHE_SECONDS = 24 * 3600
DEFAULT_CACHE_SECONDS = 3600
FETCHES_PER_HOST_PER_MINUTE = 30
SHARED_SECRET_FIELDS = ("client_secret", "client_secret_expires_at")

_PRINTABLE_ASCII = re.compile(r"[\x21-\x7e]+")
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d{1,12})\"?\s*(?:,|$)", re.IGNORECASE)
_NO_STORE = re.compile(r"(?:^|,)\s*(?:no-store|no-cache)\s*(?:,|$)", re.IGNORECASE)


def is_metadata_client_id(client_id: str) -> bool:
    """Whether `client_id` names a metadata document (an https URL) rather than a registration."""
    return client_id.startswith("https://")


def default_policy() -> DownloadPolicy:
    """The fetch's limits, from settings: the document's size bound and a short timeout. No
    private ranges (`DATA_VIZ_ALLOWED_NETWORKS` is for a signed-in caller's data, not for a URL
    an anonymous visitor names)."""
    max_bytes = getattr(settings, "OAUTH_CLIENT_METADATA_MAX_BYTES", DEFAULT_MAX_BYTES)
    return DownloadPolicy(max_bytes=max_bytes, timeout=FETCH_TIMEOUT_SECONDS)


def resolve_metadata_client(
    client_id: str, *, policy: DownloadPolicy | None = None, now: dt.datetime | None = None
) -> OAuthClient:
    """The client `client_id` names, from the cached row while fresh, else fetched and checked
    (module docstring); `OAuthError("invalid_client", ...)` naming the rule that refused it."""
    check_client_id(client_id)
    now = now or timezone.now()
    row = OAuthClient.objects.filter(client_id=client_id).first()
    if row is not None:
        if row.revoked_at is not None:
            raise refused("this client was revoked by the server's operator")
        if row.kind != OAuthClient.METADATA_DOCUMENT:
            raise refused("this client_id is registered, not a metadata document")
        if row.expires_at is not None and row.expires_at > now:
            return row
    try:
        return _fetched(client_id, policy or default_policy(), now)
    except OAuthError as refusal:  # the operator's view of why this client cannot sign in
        log(OAuthClientRefused(client_id=client_id, error=clip(refusal.description, ERROR_TEXT_LENGTH)))
        raise


def _fetched(client_id: str, policy: DownloadPolicy, now: dt.datetime) -> OAuthClient:
    """The document fetched (within the per-host rate), checked and stored in the client's row."""
    host = (urlsplit(client_id).hostname or "").lower()
    if not ratelimit.allow("cimd-fetch", host, FETCHES_PER_HOST_PER_MINUTE, 60):
        raise refused(f"{host} was asked for metadata documents too often in the last minute; try again shortly")
    downloaded = fetch(client_id, policy)
    document = parse_document(client_id, downloaded.body)
    expires_at = now + dt.timedelta(seconds=cache_seconds(downloaded.headers.get("cache-control", "")))
    row = services.store_metadata_client(client_id, document, fetched_at=now, expires_at=expires_at)
    if row is None:
        raise refused("could not be stored; try again")
    return row


def refused(why: str) -> OAuthError:
    return OAuthError(error="invalid_client", description=f"client metadata document: {why}")


def check_client_id(client_id: str) -> SplitResult:
    """The parts of a client identifier URL the draft allows (§3), or `invalid_client`."""
    if len(client_id) > MAX_URL_LENGTH:
        raise refused(f"the client_id URL is longer than {MAX_URL_LENGTH} characters")
    if not _PRINTABLE_ASCII.fullmatch(client_id):
        raise refused("the client_id URL must be printable ASCII without spaces (percent-encode the rest)")
    if not client_id.startswith("https://"):
        raise refused("the client_id URL must start with https://")
    try:
        parts = urlsplit(client_id)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        raise refused("the client_id is not a URL") from None
    if "#" in client_id:
        raise refused("the client_id URL must not have a fragment")
    if "@" in parts.netloc:
        raise refused("the client_id URL must not carry a user name or password")
    if not parts.hostname:
        raise refused("the client_id URL has no host")
    if parts.path in ("", "/"):
        raise refused("the client_id URL must have a path, such as https://client.example/oauth/metadata.json")
    if any(segment in (".", "..") for segment in parts.path.split("/")):
        raise refused("the client_id URL must not have . or .. path segments")
    return parts


def fetch(client_id: str, policy: DownloadPolicy) -> Downloaded:
    """The document's answer, through the SSRF-safe bounded download; `invalid_client` naming
    why it could not be had (the download's own words, about this URL)."""
    try:
        return async_to_sync(download_with_headers)(client_id, policy)
    except ToolError as exc:
        why = str(exc.message).removeprefix(f"{ARGUMENT}: ")
        if why.startswith("the file is larger than"):  # said in MB, for data files
            why = f"it is larger than {policy.max_bytes} bytes"
        raise refused(f"could not be fetched: {why}") from None


def parse_document(client_id: str, body: bytes) -> dict[str, Any]:
    """The document, checked (module docstring); `invalid_client` naming the first rule broken."""
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise refused("is not JSON") from None
    if not isinstance(document, dict):
        raise refused("is not a JSON object")
    if document.get("client_id") != client_id:
        raise refused("its client_id is not exactly the URL it was fetched from")
    for name in SHARED_SECRET_FIELDS:
        if name in document:
            raise refused(f"has {name}: a metadata document client has no shared secret")
    method = document.get("token_endpoint_auth_method", "none")
    if method != "none":
        raise refused('token_endpoint_auth_method must be "none" (a public client) or absent')
    check_redirect_uris(document.get("redirect_uris"))
    client_name = document.get("client_name")
    if client_name is not None and (
        not isinstance(client_name, str) or not client_name.strip() or len(client_name) > MAX_NAME_LENGTH
    ):
        raise refused(f"client_name must be text of 1 to {MAX_NAME_LENGTH} characters")
    client_uri = document.get("client_uri")
    if client_uri is not None and not _is_https_url(client_uri):
        raise refused(f"client_uri must be an https URL of at most {MAX_URL_LENGTH} characters")
    _check_flow(document, "grant_types", "authorization_code")
    _check_flow(document, "response_types", "code")
    scope = document.get("scope")
    if scope is not None and (not isinstance(scope, str) or len(scope) > MAX_SCOPE_LENGTH):
        raise refused(f"scope must be text of at most {MAX_SCOPE_LENGTH} characters")
    return document


def check_redirect_uris(uris: Any) -> list[str]:
    """1 to 10 redirect URIs, each one `authserver.redirects` allows (as for a registration)."""
    if not isinstance(uris, list) or not uris:
        raise refused("redirect_uris must be a list of 1 or more URLs")
    if len(uris) > MAX_REDIRECT_URIS:
        raise refused(f"redirect_uris has {len(uris)} URLs; at most {MAX_REDIRECT_URIS} are accepted")
    for index, uri in enumerate(uris):
        problem = redirect_uri_problem(uri)
        if problem is not None:
            raise refused(f"redirect_uris[{index}]: {problem}")
    return uris


def cache_seconds(cache_control: str) -> int:
    """How long the fetched document is used: `max-age` clamped to 5 minutes .. 24 hours; the
    minimum for `no-store`/`no-cache` (a document fetched on every sign-in step would let anyone
    make us fetch on demand); 1 hour when the answer says nothing."""
    if _NO_STORE.search(cache_control):
        return MIN_CACHE_SECONDS
    found = _MAX_AGE.search(cache_control)
    seconds = int(found.group(1)) if found else DEFAULT_CACHE_SECONDS
    return min(max(seconds, MIN_CACHE_SECONDS), MAX_CACHE_SECONDS)


def _is_https_url(value: Any) -> bool:
    if not isinstance(value, str) or len(value) > MAX_URL_LENGTH or not _PRINTABLE_ASCII.fullmatch(value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme == "https" and bool(parts.hostname) and "@" not in parts.netloc


def _check_flow(document: dict[str, Any], field: str, needed: str) -> None:
    values = document.get(field)
    if values is None:
        return
    if not isinstance(values, list) or not all(isinstance(value, str) for value in values) or needed not in values:
        raise refused(f'{field} must be a list of names that includes "{needed}"')
