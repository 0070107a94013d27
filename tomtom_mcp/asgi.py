"""The ASGI entry point: `/mcp` goes to the MCP transport, everything else to Django.

Django's ASGI handler does not speak the lifespan protocol, so lifespan events go to the MCP
app, whose lifespan runs the SDK's task group (see docs/adr/0001-mcp-mounted-beside-django.md).
"""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tomtom_mcp.settings")
django_app = get_asgi_application()


def build_application():
    from django.conf import settings

    from tools.config import server_config
    from tools.mcp.http import HttpSettings, build_http_app
    from tools.mcp.identity import SessionIds
    from tools.mcp.service import build_dispatcher

    mcp_app = build_http_app(
        build_dispatcher(),
        server_config(),
        HttpSettings(
            allowed_hosts=settings.ALLOWED_HOSTS,
            allowed_origins=settings.MCP_ALLOWED_ORIGINS,
            max_body_bytes=settings.MCP_MAX_BODY_BYTES,
            session_ids=SessionIds(settings.MCP_SESSION_SECRETS),
        ),
    )

    async def application(scope, receive, send):
        if scope["type"] == "lifespan" or (
            scope["type"] == "http" and scope["path"].rstrip("/") == mcp_app.settings.path
        ):
            await mcp_app(scope, receive, send)
        else:
            await django_app(scope, receive, send)

    application.mcp_app = mcp_app  # type: ignore[attr-defined]
    return application


application = build_application()
