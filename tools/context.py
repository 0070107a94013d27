"""The call context: who is calling, with which key and backend, and how to reach TomTom.

Built by a transport adapter (HTTP, stdio, exec) for every call and handed to interceptors and
tools. Tools read `context.tomtom`; they never see headers or sessions.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from core.app_status import Caller
from core.errors import ToolError
from core.events import CLIENT_NAME_LENGTH, USER_AGENT_LENGTH, clip
from core.exchange import VERSION_LENGTH
from tools.download import DownloadPolicy
from tools.tomtom.backends import Backend
from tools.tomtom.client import ClientSettings, TomTomSession, UpstreamStats, upstream_user_agent
from tools.tomtom.credentials import KeySources, resolve_api_key

PRODUCT_TOKENS = {"http": "TomTomMCPSDKHttp", "stdio": "TomTomMCPSDK", "exec": "TomTomMCPSDK"}


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """What every call on this process shares (read once from Django settings by protocol/config.py)."""

    version: str
    client: ClientSettings
    server_key: str | None = field(repr=False)
    default_backend: Backend = Backend.ORBIS
    hosted: bool = False
    downloads: DownloadPolicy = field(default_factory=DownloadPolicy)
    """How tomtom-data-viz downloads a caller's `data_url` (tools.download)."""


@dataclass(frozen=True, slots=True)
class TenantTerms:
    """What a signed-in tenant may do in this request (tenants/, docs/oauth.md)."""

    allowed_tools: frozenset[str] | None = None
    """The tools it may call; None: every tool."""
    over_quota: str | None = None
    """The quota this request's tool calls went over (e.g. `100 calls per day`), None when admitted."""
    retry_after: int | None = None
    """Seconds until that quota's window ends."""


def key_auth_method(keys: KeySources, config: ServerConfig, *, over_http: bool) -> str | None:
    """How a caller with `keys` gets its TomTom key (`resolve_api_key`), None when it has none."""
    try:
        return resolve_api_key(keys, server_key=config.server_key, over_http=over_http, hosted=config.hosted)[1]
    except ToolError:
        return None


def new_request_id() -> str:
    """A request id: 16 random hex digits (64 bits)."""
    return os.urandom(8).hex()


@dataclass(slots=True)
class CallContext:
    """Who is calling and how; the client name, User-Agent and protocol version are cut to the
    lengths the log events declare (core/events.py, core/exchange.py)."""

    config: ServerConfig
    transport: str
    keys: KeySources = field(default_factory=KeySources)
    backend: Backend | None = None
    client_name: str = "unknown"
    user_agent: str | None = None
    apps_declared: bool | None = None
    """Whether the client declared MCP Apps support (its capabilities at `initialize`, as the
    transport knows them); None: not known (an in-process caller, a session id minted before
    the flag). The protocol layer decides `widgets` from it."""
    widgets: bool = True
    """Whether this client is offered widgets: with False, `show_ui` is accepted but the answer
    carries no app data (protocol.appdata), and widget-only tools are not listed."""
    hidden_tools: frozenset[str] = frozenset()
    """Tools the operator's client rule does not list to this client (governance.client_surface):
    they still answer calls."""
    tenant: str | None = None
    """The signed-in tenant's name (OAuth), for cost attribution; None for key and stdio callers."""
    session: str | None = None
    """The client session the call came in on (core.events.SessionKey: over HTTP the label of
    the signed `Mcp-Session-Id`, over stdio one per process); None without one."""
    terms: TenantTerms | None = None
    protocol_version: str | None = None
    """The MCP protocol revision the request was made in (over HTTP its `MCP-Protocol-Version`
    header, or the 2026-07-28 request's own; over stdio the one agreed at `initialize`); None
    when not known (the exec CLI, an HTTP request without the header)."""
    request_id: str = field(default_factory=new_request_id)
    stats: UpstreamStats = field(default_factory=UpstreamStats)
    _tomtom: TomTomSession | None = None

    def __post_init__(self) -> None:
        # They come from the client and go into the log lines (and the first two into every request
        # header) of the call.
        self.client_name = clip(self.client_name, CLIENT_NAME_LENGTH)
        if self.user_agent is not None:
            self.user_agent = clip(self.user_agent, USER_AGENT_LENGTH)
        if self.protocol_version is not None:
            self.protocol_version = clip(self.protocol_version, VERSION_LENGTH)

    def caller(self, tool: str) -> Caller:
        """What every app-status line says of the call it reports on (`**` it into the event)."""
        return {
            "tool": tool,
            "client": self.client_name,
            "user_agent": self.user_agent,
            "request_id": self.request_id,
            "session": self.session,
        }

    def secrets(self) -> list[str]:
        """Every key this call could use, for scrubbing text that must not carry them."""
        candidates = (self.keys.header, self.keys.bearer, self.keys.cli, self.keys.tenant, self.config.server_key)
        return [c.strip() for c in candidates if c and c.strip()]

    @property
    def effective_backend(self) -> Backend:
        return self.backend or self.config.default_backend

    @property
    def auth_method(self) -> str | None:
        return key_auth_method(self.keys, self.config, over_http=self.transport == "http")

    @property
    def tomtom(self) -> TomTomSession:
        """The TomTom session for this call; raises `unauthorized` when no key can be used."""
        if self._tomtom is None:
            key, _ = resolve_api_key(
                self.keys,
                server_key=self.config.server_key,
                over_http=self.transport == "http",
                hosted=self.config.hosted,
            )
            product = PRODUCT_TOKENS.get(self.transport, "TomTomMCPSDK")
            self._tomtom = TomTomSession(
                settings=self.config.client,
                api_key=key,
                backend=self.effective_backend,
                user_agent=upstream_user_agent(product, self.config.version, self.client_name),
                stats=self.stats,
            )
        return self._tomtom
