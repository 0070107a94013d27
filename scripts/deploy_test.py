"""`make test-deploy`: the deployment recipe in deploy/, run for real on loopback.

Three replicas (gunicorn + uvicorn workers, deploy/tomtom-mcp.env) on a fresh PostgreSQL database
behind Debian's nginx with deploy/nginx.conf (TLS with a throw-away certificate); TomTom is the
loopback stub. Every request goes through nginx. Checks, then prints figures:

- MCP requests of one session spread over all replicas, and every replica logs the client's name;
- a widget result (app data) decodes;
- staff log into the admin over https and retire a tool; every replica answers it `retired`
  within GOVERNANCE_REFRESH_SECONDS plus one request;
- app-status reports logged by the three replicas, ingested from their logs, show on the
  overview, the widget dashboard and in the API with all three replica names;
- every replica is ready (`/readyz`: database, migrations, fresh governance rules) before nginx
  is started, and answers ready through nginx; `/` says how to connect; each gunicorn start
  line names its address.

    .venv/bin/python scripts/deploy_test.py      (needs nginx, PostgreSQL at DATABASE_ADMIN_URL)
"""

from __future__ import annotations

import base64
import datetime as dt
import gzip
import ipaddress
import json
import os
import re
import secrets
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psycopg

REPO = Path(__file__).resolve().parent.parent
ADMIN_URL = os.environ.get("DATABASE_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres")
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
REPLICAS = 3
REFRESH_SECONDS = 5
CLIENT = "Deploy Test Client/1.0"
STAFF = ("operator", secrets.token_urlsafe(16))
GEOCODE = {
    "results": [
        {
            "id": "NL/PAD/p0/1",
            "type": "address",
            "title": "Dam 1, 1012 JS Amsterdam",
            "address": {"houseNumber": "1", "street": "Dam", "municipality": "Amsterdam", "countryCodeIso2": "NL"},
            "position": {"type": "Point", "coordinates": [4.89273, 52.37314]},
        }
    ],
}
"""An Orbis Geocoding v2 answer (the shape of tests/data/geocode_v2.json), for one address."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def self_signed(directory: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


def replica_env(database_url: str, stub_url: str, origin: str) -> dict[str, str]:
    """deploy/tomtom-mcp.env with its placeholders filled, pointed at loopback."""
    fills = {
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "MCP_SESSION_SECRETS": secrets.token_urlsafe(32),
        "MCP_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_CSRF_TRUSTED_ORIGINS": origin,
    }
    env = {}
    for line in (REPO / "deploy" / "tomtom-mcp.env").read_text().splitlines():
        if line and not line.startswith("#"):
            name, value = line.split("=", 1)
            env[name] = fills[name] if value.startswith("<") else value
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "MCP_", "TOMTOM_", "DATABASE_"))}
    return {
        **clean,
        **env,
        "DATABASE_URL": database_url,
        "TOMTOM_API_BASE_URL": stub_url,
        "WEB_CONCURRENCY": "1",
        "DOTENV_PATH": "/nonexistent",
        "GOVERNANCE_REFRESH_SECONDS": str(REFRESH_SECONDS),
    }


def nginx_config(tmp: Path, port: int, replica_ports: list[int], cert: Path, key: Path) -> Path:
    """deploy/nginx.conf for loopback: the TLS server only, these replicas, this certificate."""
    site = (REPO / "deploy" / "nginx.conf").read_text()
    site = re.sub(r"server \{\s*listen 80;.*?\n\}\n", "", site, flags=re.S)  # no port-80 redirect here
    servers = "".join(f"    server 127.0.0.1:{p} max_fails=3 fail_timeout=10s;\n" for p in replica_ports)
    site = re.sub(r"(    server 127\.0\.0\.1:\d+ [^\n]*\n)+", servers, site)
    site = site.replace("listen 443 ssl http2;", f"listen 127.0.0.1:{port} ssl http2;").replace(
        "mcp.example.com", "127.0.0.1"
    )
    site = re.sub(r"ssl_certificate\s+\S+;", f"ssl_certificate {cert};", site)
    site = re.sub(r"ssl_certificate_key\s+\S+;", f"ssl_certificate_key {key};", site)
    (tmp / "site.conf").write_text(site)
    user = "user root;\n" if os.geteuid() == 0 else ""
    main = f"""{user}worker_processes 1;
pid {tmp}/nginx.pid;
error_log stderr warn;
events {{ worker_connections 256; }}
http {{
    client_body_temp_path {tmp}/body; proxy_temp_path {tmp}/proxy; fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi; scgi_temp_path {tmp}/scgi;
    log_format probe '{{"seq":"$http_x_probe","upstream":"$upstream_addr","status":$status,"uri":"$request_uri"}}';
    access_log {tmp}/access.log probe;
    include {tmp}/site.conf;
}}
"""
    (tmp / "nginx.conf").write_text(main)
    return tmp / "nginx.conf"


def wait_for(url: str, verify: object, process: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"{what} exited ({process.returncode})")
        try:
            if httpx.get(url, verify=verify, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    sys.exit(f"{what} did not answer {url}")


class Nginx:
    """Requests through nginx, each tagged so its access-log line names the replica that answered."""

    def __init__(self, base: str, verify: ssl.SSLContext, access_log: Path) -> None:
        self.http = httpx.Client(base_url=base, verify=verify, timeout=30)
        self.access_log = access_log
        self.sent = 0

    def request(self, method: str, path: str, **kwargs) -> tuple[httpx.Response, str]:
        self.sent += 1
        seq = str(self.sent)
        headers = {**kwargs.pop("headers", {}), "X-Probe": seq}
        response = self.http.request(method, path, headers=headers, **kwargs)
        return response, self.upstream(seq)

    def upstream(self, seq: str) -> str:
        for _ in range(50):
            for line in reversed(self.access_log.read_text().splitlines()):
                entry = json.loads(line)
                if entry["seq"] == seq:
                    return entry["upstream"]
            time.sleep(0.02)
        raise AssertionError(f"request {seq} is not in nginx's access log")

    def mcp(self, method: str, params: dict, session: str | None = None) -> tuple[dict, str, httpx.Response]:
        headers = {"Accept": "application/json", "tomtom-api-key": "deploy-test-key"}
        if session:
            headers["Mcp-Session-Id"] = session
        body = {"jsonrpc": "2.0", "id": self.sent + 1, "method": method, "params": params}
        response, upstream = self.request("POST", "/mcp", json=body, headers=headers)
        assert response.status_code == 200, (response.status_code, response.text)
        return response.json(), upstream, response

    def call(self, name: str, arguments: dict, session: str) -> tuple[dict, str]:
        answer, upstream, _ = self.mcp("tools/call", {"name": name, "arguments": arguments}, session)
        return answer["result"], upstream


def admin_login(nginx: Nginx) -> None:
    page, _ = nginx.request("GET", "/admin/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    login = {"csrfmiddlewaretoken": token, "username": STAFF[0], "password": STAFF[1]}
    done, _ = nginx.request("POST", "/admin/login/?next=/admin/", headers={"Referer": str(page.url)}, data=login)
    assert done.status_code == 302 and done.headers["location"] == "/admin/", (done.status_code, done.text[:500])


def admin_retire(nginx: Nginx, tool: str, replaced_by: str) -> None:
    form, _ = nginx.request("GET", "/admin/tools/retiredtool/add/")
    assert form.status_code == 200, form.status_code
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text).group(1)
    today = dt.datetime.now(dt.UTC).date().isoformat()
    # The tool is live: retiring it is the kill switch, which the form asks to confirm.
    data = {
        "csrfmiddlewaretoken": token,
        "tool": tool,
        "replaced_by": [replaced_by],
        "since": today,
        "release": "",
        "message": f"Use {replaced_by}.",
        "confirm_kill_switch": "on",
        "_save": "Save",
    }
    saved, _ = nginx.request("POST", "/admin/tools/retiredtool/add/", data=data, headers={"Referer": str(form.url)})
    assert saved.status_code == 302, (saved.status_code, re.findall(r'class="errorlist[^>]*>(.*?)</ul>', saved.text))


def main() -> None:
    if not Path(NGINX).exists():
        sys.exit("nginx is needed: apt-get install -y nginx")
    tmp = Path(tempfile.mkdtemp(prefix="deploy-test-"))
    database = f"deploytest_{secrets.token_hex(4)}"
    admin = psycopg.connect(ADMIN_URL, autocommit=True)
    admin.execute(f'CREATE DATABASE "{database}"')
    base_db = ADMIN_URL.rsplit("/", 1)[0]
    processes: list[subprocess.Popen] = []
    try:
        port, stub_port = free_port(), free_port()
        replica_ports = [free_port() for _ in range(REPLICAS)]
        origin = f"https://127.0.0.1:{port}"
        env = replica_env(f"{base_db}/{database}", f"http://127.0.0.1:{stub_port}", origin)
        routes = [{"method": "GET", "pattern": r"/maps/orbis/places/geocode", "body": json.dumps(GEOCODE)}]
        (tmp / "routes.json").write_text(json.dumps(routes))
        manage = [sys.executable, "manage.py"]
        for command in (
            ["migrate", "--no-input", "-v", "0"],
            ["collectstatic", "--no-input", "-v", "0"],
            ["createsuperuser", "--no-input", "--username", STAFF[0], "--email", "ops@example.com"],
            ["check", "--deploy", "--database", "default", "--fail-level", "WARNING"],
        ):
            extra = {"DJANGO_SUPERUSER_PASSWORD": STAFF[1]}
            subprocess.run([*manage, *command], cwd=REPO, env={**env, **extra}, check=True, stdout=subprocess.DEVNULL)
        processes.append(
            subprocess.Popen(
                [sys.executable, "-m", "tests.support.tomtom_stub", str(stub_port), str(tmp / "routes.json")],
                cwd=REPO,
                stdout=subprocess.DEVNULL,
            )
        )
        logs = []
        for i, replica_port in enumerate(replica_ports, 1):
            log = tmp / f"replica-{i}.log"
            logs.append(log)
            processes.append(
                subprocess.Popen(
                    [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "tomtom_mcp.asgi:application"],
                    cwd=REPO,
                    env={**env, "BIND": f"127.0.0.1:{replica_port}", "HOSTNAME": f"replica-{i}"},
                    stdout=log.open("wb"),
                    stderr=subprocess.STDOUT,
                )
            )
        for replica_port, process in zip(replica_ports, processes[1:], strict=True):
            wait_for(f"http://127.0.0.1:{replica_port}/readyz", True, process, f"replica on {replica_port}")
        cert, key = self_signed(tmp)
        config = nginx_config(tmp, port, replica_ports, cert, key)
        nginx_process = subprocess.Popen([NGINX, "-p", str(tmp), "-c", str(config), "-g", "daemon off;"])
        processes.append(nginx_process)
        verify = ssl.create_default_context(cafile=str(cert))
        wait_for(f"{origin}/readyz", verify, nginx_process, "nginx")
        nginx = Nginx(origin, verify, tmp / "access.log")
        figures = run_checks(nginx, env, logs, replica_ports)
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
        admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        admin.close()
    print("\n### Deployment test: 3 replicas on PostgreSQL behind nginx (loopback, TLS)\n")
    print("| figure | value |\n| --- | ---: |")
    for name, value in figures.items():
        print(f"| {name} | {value} |")
    shutil.rmtree(tmp, ignore_errors=True)


def run_checks(nginx: Nginx, env: dict[str, str], logs: list[Path], replica_ports: list[int]) -> dict[str, object]:
    replicas = {f"127.0.0.1:{p}" for p in replica_ports}
    # 0. Ready everywhere, through nginx; the root page says how to connect; start lines name their address.
    ready_on = set()
    for _ in range(3 * REPLICAS):
        ready, upstream = nginx.request("GET", "/readyz")
        assert ready.status_code == 200 and ready.json()["status"] == "ready", (ready.status_code, ready.text)
        ready_on.add(upstream)
    assert ready_on == replicas, f"/readyz reached {ready_on}, not every replica"
    root, _ = nginx.request("GET", "/")
    assert root.status_code == 200 and '<code id="endpoint">https://127.0.0.1/mcp</code>' in root.text, root.text[:300]
    for log, port in zip(logs, replica_ports, strict=True):
        started = [json.loads(line)["message"] for line in log.read_text().splitlines() if "Listening at" in line]
        assert started and started[0].startswith(f"Listening at: http://127.0.0.1:{port} ("), (log.name, started)
    # 1. One session, spread over every replica, keeps its client name.
    # An MCP Apps host: the session id it gets says so, so every replica offers it widgets.
    apps = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}
    init = {"protocolVersion": "2025-11-25", "capabilities": apps, "clientInfo": {"name": CLIENT, "version": "1"}}
    _, _, response = nginx.mcp("initialize", init)
    session = response.headers["mcp-session-id"]
    reached = set()
    for _ in range(3 * REPLICAS):
        result, upstream = nginx.call("tomtom-geocode", {"query": "Dam 1"}, session)
        assert result["isError"] is False, result
        reached.add(upstream)
    assert reached == replicas, f"calls reached {reached}, not every replica {replicas}"
    for log in logs:
        calls = [e for e in map(json.loads, log.read_text().splitlines()) if e.get("message") == "Tool call"]
        assert calls and all(e["client"] == CLIENT for e in calls), (log.name, {e.get("client") for e in calls})
    # 2. A widget result decodes.
    result, _ = nginx.call("tomtom-geocode", {"query": "Dam 1", "show_ui": True}, session)
    app_data = json.loads(gzip.decompress(base64.b64decode(result["_meta"]["com.tomtom/app-data"])))
    assert app_data, "the widget's app data is empty"
    # 3. App-status reports from every replica.
    for i in range(2 * REPLICAS):
        report = {
            "tool": "tomtom-geocode",
            "outcome": "failed",
            "source": "inline",
            "stage": "render",
            "duration_ms": 10 + i,
            "error": "WebGL context lost",
        }
        assert nginx.call("tomtom-report-app-status", report, session)[0]["isError"] is False
    # 4. Staff retire a tool over https; every replica answers `retired` within the refresh time.
    admin_login(nginx)
    admin_retire(nginx, "tomtom-traffic", "tomtom-routing")
    retired_at = time.monotonic()
    first_retired: dict[str, float] = {}
    deadline = retired_at + REFRESH_SECONDS + 10  # a liveness bound; the figure below is the measurement
    traffic = {"bbox": [4.88, 52.36, 4.92, 52.38]}
    while len(first_retired) < REPLICAS and time.monotonic() < deadline:
        result, upstream = nginx.call("tomtom-traffic", traffic, session)
        code = json.loads(result["content"][0]["text"]).get("error", {}).get("code") if result["isError"] else None
        if code == "retired":
            first_retired.setdefault(upstream, time.monotonic() - retired_at)
        else:
            assert upstream not in first_retired, f"{upstream} answered retired, then {code}"
        time.sleep(0.1)
    assert set(first_retired) == replicas, f"only {sorted(first_retired)} answered retired"
    seconds_to_retire = max(first_retired.values())
    assert seconds_to_retire <= REFRESH_SECONDS + 2, f"{seconds_to_retire:.1f} s to retire everywhere"
    # 5. The replicas' logs ingested; the dashboard and the API show all three.
    done = subprocess.run(
        [sys.executable, "manage.py", "ingest_app_status", *map(str, logs)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert ", 0 malformed" in done.stdout, done.stdout + done.stderr
    for page in ("/analytics/", "/analytics/widgets/", "/analytics/events/"):
        dashboard, _ = nginx.request("GET", page)
        assert dashboard.status_code == 200 and CLIENT in dashboard.text, (page, dashboard.status_code)
    events, _ = nginx.request("GET", "/api/analytics/failing-events", params={"limit": 100})
    replica_names = {e["replica"] for e in events.json()["events"] if e["client"] == CLIENT}
    assert replica_names == {f"replica-{i}" for i in range(1, REPLICAS + 1)}, replica_names
    lines = sum(len(log.read_text().splitlines()) for log in logs)
    return {
        "requests through nginx": nginx.sent,
        "replicas reached": f"{len(reached)} of {REPLICAS}",
        "seconds to retire across replicas (max of first `retired` per replica)": f"{seconds_to_retire:.2f}",
        "per replica": ", ".join(f"{u.rsplit(':', 1)[1]}: {s:.2f} s" for u, s in sorted(first_retired.items())),
        "log lines ingested (0 malformed)": lines,
        "report replicas on the dashboard's API": len(replica_names),
        "replicas ready through nginx (/readyz)": f"{len(ready_on)} of {REPLICAS}",
    }


if __name__ == "__main__":
    main()
