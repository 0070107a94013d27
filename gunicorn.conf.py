"""Production: gunicorn with uvicorn workers (`make serve-prod`).

Workers share nothing: any worker (or replica) can answer any request. Settings come from the
environment: WEB_CONCURRENCY (workers, default 2), BIND (default 127.0.0.1:8000).
"""

import os

from tomtom_mcp.logging import ListeningAddress, server_log_config

worker_class = "uvicorn_worker.UvicornWorker"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
bind = os.environ.get("BIND", "127.0.0.1:8000")
# X-Forwarded-For/-Proto are believed only from these peers (the proxy); uvicorn's workers apply it.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")
# Each worker listens on a socket of its own (SO_REUSEPORT): the kernel hands each new connection
# to one of them by a hash of its addresses. On one shared socket, the event loop that woke first
# accepted every connection waiting (often all of a client's keep-alive connections).
reuse_port = True
keepalive = 30
graceful_timeout = 20
timeout = 60
accesslog = None
loglevel = os.environ.get("LOG_LEVEL", "INFO").lower()
logconfig_dict = server_log_config(loglevel.upper())  # gunicorn's and uvicorn's lines as JSON too
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "0"))
max_requests_jitter = max_requests // 10


def on_starting(server):
    """The start line's address (tomtom_mcp/logging.py, as bound: `BIND` or `-b`); Prometheus
    multiprocess mode (docs/analytics.md): start from an empty metrics directory."""
    ListeningAddress.configure(server.cfg.address)
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        os.makedirs(directory, exist_ok=True)
        for name in os.listdir(directory):
            if name.endswith(".db"):
                os.remove(os.path.join(directory, name))


def child_exit(server, worker):
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
