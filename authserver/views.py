"""The authorization server's endpoints (thin: checks and answers; authserver.services writes).

- `GET /.well-known/oauth-authorization-server`: RFC 8414 metadata.
- `GET|POST /oauth/authorize`: the authorization request (RFC 6749 §4.1.1, PKCE S256 only,
  RFC 8707 `resource`); GET shows the consent page to the signed-in person, POST decides.
  A bad client or redirect URI is shown to the person as a coded 400 page, never redirected to;
  other errors go back to the verified redirect URI with `error`, `state` and `iss` (RFC 9207).
- `POST /oauth/token`: authorization_code (with code_verifier) and refresh_token grants only.
- `POST /oauth/register`: RFC 7591 registration of public clients, rate-limited per address.
- `POST /oauth/revoke`: RFC 7009.
- `/oauth/login`: Django's `LoginView` with our template, at most `LOGIN_ATTEMPTS` password posts
  per client address per `LOGIN_WINDOW_SECONDS` (every replica counting together).
Every endpoint answers 404 while OAUTH_BUILTIN is off.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode, urlsplit

import orjson
from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseBase, HttpResponseRedirect, QueryDict
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt

from authserver import selectors, server, services
from authserver.errors import OAuthError
from authserver.models import OAuthClient
from authserver.redirects import registered_redirect

MAX_PARAM_CHARS = 2048
MAX_TOKEN_PARAM_CHARS = 16 * 1024
MAX_REGISTRATION_BYTES = 16 * 1024
S256_CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")
"""BASE64URL(SHA256(verifier)) without padding (RFC 7636 §4.2)."""
LOGIN_ATTEMPTS = 30
LOGIN_WINDOW_SECONDS = 600
AUTHORIZE_PARAMS = (
    "response_type",
    "client_id",
    "redirect_uri",
    "scope",
    "state",
    "code_challenge",
    "code_challenge_method",
    "resource",
)
JSON_HEADERS = {"Cache-Control": "no-store", "Pragma": "no-cache", "Access-Control-Allow-Origin": "*"}


def builtin_only(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """`view`, answering 404 while OAUTH_BUILTIN is off."""

    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not settings.OAUTH_BUILTIN:
            return HttpResponse(status=404)
        return view(request, *args, **kwargs)

    wrapped.__name__ = view.__name__
    wrapped.__doc__ = view.__doc__
    return wrapped


def _json(body: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None) -> HttpResponse:
    response = HttpResponse(orjson.dumps(body), status=status, content_type="application/json")
    for name, value in {**JSON_HEADERS, **(headers or {})}.items():
        response[name] = value
    return response


def _error_json(error: OAuthError) -> HttpResponse:
    return _json(error.as_dict(), error.status)


def _cors_preflight(methods: str) -> HttpResponse:
    response = HttpResponse(status=204)
    response["Access-Control-Allow-Origin"] = "*"
    response["Access-Control-Allow-Methods"] = methods
    response["Access-Control-Allow-Headers"] = "Content-Type, Mcp-Protocol-Version"
    return response


def _params(data: QueryDict, names: tuple[str, ...], limit: int = MAX_PARAM_CHARS) -> dict[str, str]:
    """The named parameters, each at most once (RFC 6749 §3.1) and at most `limit` characters."""
    found: dict[str, str] = {}
    for name in names:
        values = data.getlist(name)
        if len(values) > 1:
            raise OAuthError("invalid_request", f"{name} is given more than once")
        if values:
            if len(values[0]) > limit:
                raise OAuthError("invalid_request", f"{name} is longer than {limit} characters")
            if "\x00" in values[0]:  # PostgreSQL text cannot hold it; no OAuth value has one
                raise OAuthError("invalid_request", f"{name} contains a NUL character")
            found[name] = values[0]
    return found


# --- metadata ------------------------------------------------------------------------------------


@builtin_only
def metadata_view(request: HttpRequest) -> HttpResponse:
    """RFC 8414 metadata, public and cacheable."""
    if request.method == "OPTIONS":
        return _cors_preflight("GET, OPTIONS")
    if request.method not in ("GET", "HEAD"):
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD, OPTIONS"})
    return _json(server.metadata(), headers={"Cache-Control": "public, max-age=3600"})


# --- authorize -----------------------------------------------------------------------------------


def _page(request: HttpRequest, template: str, context: dict[str, Any], status: int) -> HttpResponse:
    return render(request, f"authserver/{template}", context, status=status)


def _error_page(request: HttpRequest, error: OAuthError, **words: str) -> HttpResponse:
    """A coded error shown to the person (`heading` and `lead` replace the bad-request wording)."""
    context = {"error": error.error, "description": error.description, **words}
    return _page(request, "error.html", context, error.status)


def _back(redirect_uri: str, **values: str | None) -> HttpResponseRedirect:
    """A redirect to the client's (verified) redirect URI with `values` added to its query."""
    query = urlencode({k: v for k, v in values.items() if v is not None})
    separator = "&" if urlsplit(redirect_uri).query else "?"
    return HttpResponseRedirect(redirect_uri + separator + query)


class _Request:
    """A checked authorization request."""

    def __init__(self, params: dict[str, str], client: OAuthClient, redirect_uri: str) -> None:
        self.params = params
        self.client = client
        self.redirect_uri = redirect_uri
        self.state = params.get("state")

    def error(self, error: OAuthError) -> HttpResponseRedirect:
        return _back(
            self.redirect_uri,
            error=error.error,
            error_description=error.description,
            state=self.state,
            iss=server.issuer(),
        )

    def check(self) -> None:
        """The rest of the request, once the redirect URI is known good (errors go back to it)."""
        params = self.params
        if params.get("response_type") != "code":
            raise OAuthError("unsupported_response_type", "response_type is code (no implicit grant)")
        if not params.get("code_challenge"):
            raise OAuthError("invalid_request", "code_challenge is required (PKCE, RFC 7636)")
        if params.get("code_challenge_method") != "S256":
            raise OAuthError("invalid_request", "code_challenge_method is S256 (plain is not supported)")
        if not S256_CHALLENGE.fullmatch(params["code_challenge"]):
            raise OAuthError("invalid_request", "code_challenge is a base64url SHA-256 (43 characters)")
        scopes = (params.get("scope") or services.SCOPE).split()
        if any(scope != services.SCOPE for scope in scopes):
            raise OAuthError("invalid_scope", f"The only scope is {services.SCOPE}")
        if "resource" in params and not server.is_our_resource(params["resource"]):
            raise OAuthError("invalid_target", "resource is not this server's /mcp (RFC 8707)")

    def query(self) -> str:
        return urlencode(self.params)


def _authorization_request(data: QueryDict) -> _Request:
    """The client and its redirect URI, checked; `OAuthError` (shown as a page) when either is bad."""
    params = _params(data, AUTHORIZE_PARAMS)
    client = selectors.client(params.get("client_id"))
    redirect_uri = registered_redirect(list(client.redirect_uris), params.get("redirect_uri"))
    if redirect_uri is None:
        raise OAuthError("invalid_request", "redirect_uri is not one this client registered")
    return _Request(params, client, redirect_uri)


@never_cache
@builtin_only
def authorize_view(request: HttpRequest) -> HttpResponse:
    """The authorization endpoint and consent page (see the module docstring)."""
    if request.method not in ("GET", "POST"):
        return HttpResponse(status=405, headers={"Allow": "GET, POST"})
    data = request.GET if request.method == "GET" else request.POST
    try:
        checked = _authorization_request(data)
    except OAuthError as error:
        return _error_page(request, error)
    try:
        checked.check()
    except OAuthError as error:
        return checked.error(error)
    here = server.AUTHORIZE_PATH + "?" + checked.query()
    if not request.user.is_authenticated:
        return redirect_to_login(here, server.LOGIN_PATH)
    tenant = selectors.tenant_of(request.user)
    if tenant is None or not tenant.enabled:
        refusal = {"person": request.user, "tenant": tenant, "here": here, "logout": server.LOGOUT_PATH}
        return _page(request, "no_tenant.html", refusal, 403)
    if request.method == "GET":
        client = checked.client
        context: dict[str, Any] = {
            "person": request.user,
            "tenant": tenant,
            "client": client,
            "registered": client.kind == OAuthClient.REGISTERED,
            "document_host": urlsplit(client.client_id).hostname if client.kind != OAuthClient.REGISTERED else "",
            "redirect_host": urlsplit(checked.redirect_uri).netloc,
            "params": checked.params,
            "here": here,
            "action": server.AUTHORIZE_PATH,
            "logout": server.LOGOUT_PATH,
        }
        return _page(request, "consent.html", context, 200)
    if request.POST.get("decision") != "allow":
        return checked.error(OAuthError("access_denied", "The person did not allow this client"))
    code = services.issue_code(
        client=checked.client,
        user=request.user,
        tenant=tenant,
        redirect_uri=checked.params.get("redirect_uri", ""),  # the token request repeats it only if it was sent
        code_challenge=checked.params["code_challenge"],
        resource=server.resource(),
    )
    return _back(checked.redirect_uri, code=code, state=checked.state, iss=server.issuer())


# --- token, registration, revocation ---------------------------------------------------------------


@csrf_exempt
@builtin_only
def token_view(request: HttpRequest) -> HttpResponse:
    """The token endpoint (RFC 6749 §3.2): JSON answers, never cached."""
    if request.method == "OPTIONS":
        return _cors_preflight("POST, OPTIONS")
    if request.method != "POST":
        return _json({"error": "invalid_request", "error_description": "POST only"}, 405, {"Allow": "POST, OPTIONS"})
    try:
        params = _params(
            request.POST,
            ("grant_type", "code", "redirect_uri", "client_id", "code_verifier", "refresh_token", "resource", "scope"),
            MAX_TOKEN_PARAM_CHARS,
        )
        client = selectors.client(params.get("client_id"))
        if "resource" in params and not server.is_our_resource(params["resource"]):
            raise OAuthError("invalid_target", "resource is not this server's /mcp (RFC 8707)")
        if "scope" in params and any(s != services.SCOPE for s in params["scope"].split()):
            raise OAuthError("invalid_scope", f"The only scope is {services.SCOPE}")
        grant_type = params.get("grant_type")
        if grant_type == "authorization_code":
            if not params.get("code"):
                raise OAuthError("invalid_request", "code is required")
            answer = services.exchange_code(
                code=params["code"],
                client_id=client.client_id,
                redirect_uri=params.get("redirect_uri"),
                verifier=params.get("code_verifier"),
                issuer=server.issuer(),
            )
        elif grant_type == "refresh_token":
            if not params.get("refresh_token"):
                raise OAuthError("invalid_request", "refresh_token is required")
            answer = services.refresh(
                refresh_token=params["refresh_token"], client_id=client.client_id, issuer=server.issuer()
            )
        elif grant_type is None:
            raise OAuthError("invalid_request", "grant_type is required")
        else:
            raise OAuthError("unsupported_grant_type", "grant_type is authorization_code or refresh_token")
    except OAuthError as error:
        return _error_json(error)
    return _json(answer.as_dict())


def _client_address(request: HttpRequest) -> str:
    """The caller's address as the server sees it (the ASGI server applies FORWARDED_ALLOW_IPS)."""
    return (request.META.get("REMOTE_ADDR") or "unknown")[:64]


def _registration_allowed(request: HttpRequest) -> bool:
    from authserver import ratelimit

    return ratelimit.allow("register", _client_address(request), settings.OAUTH_BUILTIN_REGISTRATIONS_PER_HOUR, 3600)


class LoginView(auth_views.LoginView):
    """Django's sign-in with our template; password posts are rate-limited per client address, so
    the page cannot be used to guess passwords at speed (a refused post is a 429 page)."""

    template_name = "authserver/login.html"
    redirect_authenticated_user = False

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        from authserver import ratelimit

        if not ratelimit.allow("login", _client_address(request), LOGIN_ATTEMPTS, LOGIN_WINDOW_SECONDS):
            error = OAuthError(
                "temporarily_unavailable", "Too many sign-in attempts from your address; wait a few minutes", 429
            )
            response = _error_page(
                request, error, heading="Too many sign-in attempts", lead="Wait a few minutes, then try again."
            )
            response["Retry-After"] = str(LOGIN_WINDOW_SECONDS)
            return response
        return super().post(request, *args, **kwargs)


@csrf_exempt
@builtin_only
def register_view(request: HttpRequest) -> HttpResponse:
    """Dynamic Client Registration (RFC 7591) of a public client: 201 with its client_id."""
    if request.method == "OPTIONS":
        return _cors_preflight("POST, OPTIONS")
    if request.method != "POST":
        return _json({"error": "invalid_request", "error_description": "POST only"}, 405, {"Allow": "POST, OPTIONS"})
    try:
        if (request.content_type or "") != "application/json":
            raise OAuthError("invalid_client_metadata", "The registration request is application/json")
        length = int(request.META.get("CONTENT_LENGTH") or 0)
        if length > MAX_REGISTRATION_BYTES or len(request.body) > MAX_REGISTRATION_BYTES:
            raise OAuthError(
                "invalid_client_metadata", f"The registration request is at most {MAX_REGISTRATION_BYTES} bytes"
            )
        try:
            metadata = orjson.loads(request.body)
        except orjson.JSONDecodeError:
            raise OAuthError("invalid_client_metadata", "The registration request is not JSON") from None
        services.clean_registration(metadata)  # refuse bad metadata before it counts against the address
        if not _registration_allowed(request):
            raise OAuthError(
                "temporarily_unavailable", "Too many registrations from this address; try again later", 429
            )
        client = services.register_client(metadata)
    except ValueError:  # a CONTENT_LENGTH that is not a number
        return _error_json(OAuthError("invalid_request", "Content-Length is not a number"))
    except OAuthError as error:
        response = _error_json(error)
        if error.status == 429:
            response["Retry-After"] = "3600"
        return response
    body = {
        **client.metadata,
        "client_id": client.client_id,
        "client_id_issued_at": int(client.created_at.timestamp()),
        "client_name": client.name,
    }
    return _json(body, 201)


@csrf_exempt
@builtin_only
def revoke_view(request: HttpRequest) -> HttpResponse:
    """Token revocation (RFC 7009): 200 whether or not the token was known."""
    if request.method == "OPTIONS":
        return _cors_preflight("POST, OPTIONS")
    if request.method != "POST":
        return _json({"error": "invalid_request", "error_description": "POST only"}, 405, {"Allow": "POST, OPTIONS"})
    try:
        params = _params(request.POST, ("token", "token_type_hint", "client_id"), MAX_TOKEN_PARAM_CHARS)
        client = selectors.client(params.get("client_id"))
        if not params.get("token"):
            raise OAuthError("invalid_request", "token is required")
        services.revoke_token(
            token=params["token"], client_id=client.client_id, issuer=server.issuer(), audiences=server.audiences()
        )
    except OAuthError as error:
        return _error_json(error)
    return HttpResponse(status=200, headers=JSON_HEADERS)
