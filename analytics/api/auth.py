"""Who may call the analytics API and read its schema, and the guard on its two documentation
views."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from ninja.errors import HttpError
from ninja.openapi.views import openapi_view
from ninja.security import HttpBearer, SessionAuthIsStaff


class ApiToken(HttpBearer):
    """A bearer token listed in ANALYTICS_API_TOKENS, compared in constant time (hashed first, so
    not even the length leaks)."""

    def authenticate(self, request: HttpRequest, token: str) -> str | None:
        offered = hashlib.sha256(token.encode()).digest()
        matched = False
        for allowed in settings.ANALYTICS_API_TOKENS:
            matched |= hmac.compare_digest(offered, hashlib.sha256(allowed.encode()).digest())
        return "token" if matched else None


AUTH = [SessionAuthIsStaff(), ApiToken()]
"""Who may call the API and read its schema: a staff session or a listed bearer token."""


def guard_docs(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """ninja's decorator for its two documentation views. The Swagger page: staff sessions only,
    anyone else is redirected to the admin login. The schema: the API's own authentication
    (`AUTH`), answering 401 like an endpoint when no method accepts the caller."""
    if getattr(view, "func", None) is openapi_view:
        return staff_member_required(view)

    @wraps(view)
    def schema(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            if any(method(request) for method in AUTH):
                return view(request, *args, **kwargs)
        except HttpError as refused:  # the session method's CSRF check, on an unsafe method
            return JsonResponse({"detail": refused.message}, status=refused.status_code)
        return JsonResponse({"detail": "Unauthorized"}, status=401)

    return schema
