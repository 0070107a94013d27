"""Benchmark what sign-in adds to one `/mcp` call: token validation and quota counting.

    .venv/bin/python bench/bench_oauth.py [--calls 3000] [--database-url URL]

- token validation: `ResourceServer.verify` on an RS256 and an ES256 access token, the JWKS
  cached (as on every call but the first after a key change), and on a built-in HS256 token
  (OAUTH_BUILTIN: the key derived from SECRET_KEY, the revoked-grant set read once and then
  cached for OAUTH_BUILTIN_REVOCATION_SECONDS, as on every call but one in that many seconds);
- quota counting: `tenants.store.admit` (one statement on PostgreSQL, with the thread hop the
  event loop pays) and `admit_now` (the statement alone), for a tenant with quotas, on a scratch
  database created beside DATABASE_URL's (default postgres://postgres@127.0.0.1:5432/test) and
  migrated; and on SQLite in a temporary file.

Prints a markdown table of p50 and p99 in microseconds (wall time of one call) and the CPU time
per call (`time.process_time` over all the timed calls, every thread of this process: what a
replica's cores pay, steadier than wall time on a shared machine), then drops the scratch
database. Not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


Row = tuple[str, float, float, float]
"""What was measured, p50 µs, p99 µs, CPU µs per call."""


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1e6, ordered[int(len(ordered) * 0.99) - 1] * 1e6


async def timed(calls: int, run: Callable[[], Awaitable[object]]) -> tuple[float, float, float]:
    for _ in range(min(200, calls)):  # warm up: connections, caches
        await run()
    samples = []
    cpu_started = time.process_time()
    for _ in range(calls):
        started = time.perf_counter()
        await run()
        samples.append(time.perf_counter() - started)
    cpu = (time.process_time() - cpu_started) / calls * 1e6
    return (*percentiles(samples), cpu)


def builtin_token_row(calls: int) -> Row:
    """`ResourceServer.verify` on a token of the built-in authorization server, configured as
    protocol/http/app.py configures it with OAUTH_BUILTIN on (needs Django set up and migrated:
    the revoked-grant set is read from the database)."""
    import uuid

    from django.conf import settings

    from authserver import selectors, tokens
    from protocol.oauth import OAuthSettings, ResourceServer

    resource, issuer = "https://maps.example/mcp", "https://maps.example"
    keys = tuple(selectors.keys())
    server = ResourceServer(
        OAuthSettings(
            "",
            "",
            resource,
            [issuer],
            ["mcp"],
            builtin_keys=keys,
            builtin_issuer=issuer,
            builtin_access_token_seconds=settings.OAUTH_BUILTIN_ACCESS_TOKEN_SECONDS,
            builtin_revocation_seconds=settings.OAUTH_BUILTIN_REVOCATION_SECONDS,
        )
    )
    token = tokens.issue(
        keys[0],
        issuer=issuer,
        audience=resource,
        subject="1",
        tenant="bench",
        client_id="bench-client",
        scope="mcp",
        grant_id=str(uuid.uuid4()),
        lifetime=3600,
    )

    async def run() -> tuple[float, float, float]:
        await server.verify(token)  # the first call reads the revoked-grant set
        return await timed(calls, lambda: server.verify(token))

    return ("token validation, built-in HS256 (revoked-grant set cached)", *asyncio.run(run()))


def token_rows(calls: int) -> list[Row]:
    import django
    import jwt

    django.setup()  # protocol.oauth reads the built-in server's models (unused here: no database)
    from cryptography.hazmat.primitives.asymmetric import ec

    from protocol.oauth import OAuthSettings, ResourceServer
    from tests.support.issuer import LocalIssuer

    rows = []
    with LocalIssuer() as issuer:
        resource = "https://maps.example/mcp"
        server = ResourceServer(OAuthSettings(issuer.url, issuer.jwks_url, resource, [issuer.url], ["maps"]))
        rs256 = issuer.token(aud=resource, exp=int(time.time()) + 3600)
        rows.append(("token validation, RS256 (JWKS cached)", *asyncio.run(timed(calls, lambda: server.verify(rs256)))))
        ec_key = ec.generate_private_key(ec.SECP256R1())
        public = jwt.algorithms.ECAlgorithm.to_jwk(ec_key.public_key(), as_dict=True)
        issuer.jwks = lambda: {"keys": [{**public, "kid": "ec", "use": "sig", "alg": "ES256"}]}  # type: ignore[method-assign]
        es256 = jwt.encode(issuer.claims(aud=resource, exp=int(time.time()) + 3600), ec_key, "ES256", {"kid": "ec"})
        server = ResourceServer(OAuthSettings(issuer.url, issuer.jwks_url, resource, [issuer.url], ["maps"]))
        rows.append(("token validation, ES256 (JWKS cached)", *asyncio.run(timed(calls, lambda: server.verify(es256)))))
    return rows


def quota_rows(calls: int, label: str) -> list[Row]:
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from tenants.models import Tenant, TenantKey
    from tenants.store import admit, admit_now, close_connections

    tenant = Tenant.objects.create(name="bench", claim="bench", calls_per_minute=10**9, calls_per_day=10**9)
    key = TenantKey(tenant=tenant)
    key.set_key("bench-key")
    key.save()
    assert admit_now("bench", 1) is not None

    def statement() -> tuple[float, float, float]:
        for _ in range(min(200, calls)):
            admit_now("bench", 1)
        samples = []
        cpu_started = time.process_time()
        for _ in range(calls):
            started = time.perf_counter()
            admit_now("bench", 1)
            samples.append(time.perf_counter() - started)
        return (*percentiles(samples), (time.process_time() - cpu_started) / calls * 1e6)

    rows = [builtin_token_row(calls)] if label == "PostgreSQL" else []
    rows += [
        (
            f"quota counting, {label}: admit() (thread hop + statement)",
            *asyncio.run(timed(calls, lambda: admit("bench", 1))),
        ),
        (f"quota counting, {label}: the statement alone", *statement()),
    ]
    close_connections()
    from django.db import connections

    connections.close_all()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument(
        "--database-url", default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test")
    )
    parser.add_argument("--engine", choices=["postgresql", "sqlite"], help="run one part in this process (internal)")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tomtom_mcp.settings")
    os.environ["DOTENV_PATH"] = "/nonexistent"
    if args.engine:
        label = "PostgreSQL" if args.engine == "postgresql" else "SQLite"
        for name, p50, p99, cpu in quota_rows(args.calls, label):
            print(f"| {name} | {p50:.0f} | {p99:.0f} | {cpu:.0f} |", flush=True)
        return
    import subprocess

    import psycopg

    print("| measured | p50 µs | p99 µs | CPU µs per call |\n| --- | --- | --- | --- |")
    for name, p50, p99, cpu in token_rows(args.calls):
        print(f"| {name} | {p50:.0f} | {p99:.0f} | {cpu:.0f} |", flush=True)
    scratch = f"oauth_bench_{os.getpid()}"
    admin_url = args.database_url
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {scratch}")
    try:
        env = {**os.environ, "DATABASE_URL": admin_url.rsplit("/", 1)[0] + "/" + scratch}
        command = [sys.executable, __file__, "--calls", str(args.calls)]
        subprocess.run([*command, "--engine", "postgresql"], env=env, check=True)
        with tempfile.TemporaryDirectory() as folder:
            env = {**os.environ, "DATABASE_URL": f"sqlite:///{folder}/bench.sqlite3"}
            subprocess.run([*command, "--engine", "sqlite"], env=env, check=True)
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {scratch} WITH (FORCE)")


if __name__ == "__main__":
    main()
