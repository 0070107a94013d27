"""A local OAuth issuer for tests: keys generated here, JWKS and a minimal authorization server
served on loopback.

    with LocalIssuer() as issuer:
        token = issuer.token(aud="http://127.0.0.1:8000/mcp", sub="acme", scope="maps")
        issuer.rotate()          # a new signing key; the JWKS publishes only it
        issuer.jwks_fetches      # how many times the JWKS was read
        issuer.jwks_fault = drip(0.05)   # how its key server misbehaves (`drip`, `hang`, `answer`)

The authorization server is just enough for the SDK's client: RFC 8414 metadata and a token
endpoint for the `client_credentials` grant (client id and secret from `clients`), issuing a JWT
whose `aud` is the `resource` the client asked for and whose `sub` is the client id.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

import jwt
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


Fault = Callable[[BaseHTTPRequestHandler, "LocalIssuer"], None]
"""How the key server answers one JWKS request instead of serving the keys at once."""


def drip(interval: float) -> Fault:
    """The keys, with their `Content-Length`, one byte every `interval` seconds."""

    def respond(handler: BaseHTTPRequestHandler, issuer: LocalIssuer) -> None:
        body = json.dumps(issuer.jwks()).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        for i in range(len(body)):
            try:
                handler.wfile.write(body[i : i + 1])
                handler.wfile.flush()
            except OSError:  # the client gave up
                return
            if issuer.closing.wait(interval):
                return

    return respond


def hang() -> Fault:
    """Read the request, then answer nothing until the issuer shuts down."""

    def respond(handler: BaseHTTPRequestHandler, issuer: LocalIssuer) -> None:
        issuer.closing.wait()

    return respond


def answer(body: bytes, status: int = 200, headers: dict[str, str] | None = None) -> Fault:
    """`body` (garbage, a wrong shape) as the key set, at once."""

    def respond(handler: BaseHTTPRequestHandler, issuer: LocalIssuer) -> None:
        handler.send_response(status)
        for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return respond


class LocalIssuer:
    def __init__(self, clients: dict[str, str] | None = None) -> None:
        self.clients = clients or {}
        self.jwks_fetches = 0
        self._fetch_lock = threading.Lock()
        self.jwks_fault: Fault | None = None
        self.closing = threading.Event()
        self.token_requests: list[dict[str, str]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.jwks_url = self.url + "/.well-known/jwks.json"
        self.key, self.kid = self._new_key()

    # --- keys and tokens ---------------------------------------------------------------------
    @staticmethod
    def _new_key() -> tuple[rsa.RSAPrivateKey, str]:
        return rsa.generate_private_key(public_exponent=65537, key_size=2048), uuid.uuid4().hex[:8]

    def rotate(self) -> tuple[rsa.RSAPrivateKey, str]:
        """Sign with a new key from now on; the JWKS publishes only the new one. Returns the old key."""
        old = self.key, self.kid
        self.key, self.kid = self._new_key()
        return old

    def jwks(self) -> dict[str, Any]:
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**public, "kid": self.kid, "use": "sig", "alg": "RS256"}]}

    def public_pem(self) -> bytes:
        return self.key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def claims(self, **overrides: Any) -> dict[str, Any]:
        now = int(time.time())
        values = {"iss": self.url, "iat": now, "exp": now + 300, "sub": "acme", "scope": "maps"}
        values.update(overrides)
        return {k: v for k, v in values.items() if v is not None}

    def token(self, *, key: rsa.RSAPrivateKey | None = None, kid: str | None = None, **claims: Any) -> str:
        return jwt.encode(self.claims(**claims), key or self.key, algorithm="RS256", headers={"kid": kid or self.kid})

    def raw_token(self, header: Any, claims: Any, *, signed: bool = True) -> str:
        """A compact JWS of any header and claims, as JSON values or as the very bytes to encode,
        signed RS256 with the issuer's key (whatever the header says) or with a made-up signature."""

        def part(value: Any) -> str:
            return _b64(value if isinstance(value, bytes) else json.dumps(value).encode())

        signing_input = f"{part(header)}.{part(claims)}"
        if signed:
            signature = self.key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        else:
            signature = b"not a signature"
        return f"{signing_input}.{_b64(signature)}"

    def unsigned_token(self, **claims: Any) -> str:
        """`alg: none`: no signature at all."""
        header = _b64(json.dumps({"alg": "none", "typ": "JWT", "kid": self.kid}).encode())
        return f"{header}.{_b64(json.dumps(self.claims(**claims)).encode())}."

    def hs256_with_public_key(self, **claims: Any) -> str:
        """The algorithm-confusion attack: HMAC-signed with the issuer's public key as the secret."""
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": self.kid}).encode())
        payload = _b64(json.dumps(self.claims(**claims)).encode())
        signature = hmac.new(self.public_pem(), f"{header}.{payload}".encode(), hashlib.sha256).digest()
        return f"{header}.{payload}.{_b64(signature)}"

    # --- the HTTP side -----------------------------------------------------------------------
    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.url,
            "authorization_endpoint": self.url + "/authorize",
            "token_endpoint": self.url + "/token",
            "jwks_uri": self.jwks_url,
            "response_types_supported": ["code"],
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            "code_challenge_methods_supported": ["S256"],
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, status: int, body: Any) -> None:
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                if self.path == "/.well-known/jwks.json":
                    with issuer._fetch_lock:  # handler threads run at once: no increment lost
                        issuer.jwks_fetches += 1
                    if issuer.jwks_fault is not None:
                        issuer.jwks_fault(self, issuer)
                    else:
                        self._json(200, issuer.jwks())
                elif self.path.startswith("/.well-known/oauth-authorization-server"):
                    self._json(200, issuer.metadata())
                else:
                    self._json(404, {"error": "not_found"})

            def do_POST(self) -> None:
                if self.path != "/token":
                    return self._json(404, {"error": "not_found"})
                form = {
                    k: v[0] for k, v in parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode()).items()
                }
                issuer.token_requests.append(form)
                scheme, _, credentials = (self.headers.get("Authorization") or "").partition(" ")
                client_id, _, secret = base64.b64decode(credentials or "").decode().partition(":")
                if scheme != "Basic" or issuer.clients.get(client_id) != secret:
                    return self._json(401, {"error": "invalid_client"})
                if form.get("grant_type") != "client_credentials":
                    return self._json(400, {"error": "unsupported_grant_type"})
                token = issuer.token(aud=form.get("resource"), sub=client_id, scope=form.get("scope", ""))
                return self._json(200, {"access_token": token, "token_type": "Bearer", "expires_in": 300})

        return Handler

    def __enter__(self) -> LocalIssuer:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.closing.set()
        self._server.shutdown()
        self._server.server_close()
