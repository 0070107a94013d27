#!/usr/bin/env bash
# Run the MCP conformance suite (Node 22, from the npm registry) against a live server.
# Usage: scripts/conformance.sh [PYTHON]   (PYTHON defaults to .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
python="${1:-.venv/bin/python}"
port="$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
out="$(mktemp -d)"
DOTENV_PATH=/nonexistent TOMTOM_API_BASE_URL="http://127.0.0.1:9" "$python" -m uvicorn tomtom_mcp.asgi:application \
  --port "$port" --log-level warning >"$out/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -rf "$out"' EXIT
for _ in $(seq 100); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 0.2
done
npx -y -p node@22 -p @modelcontextprotocol/conformance@0.1.16 -- \
  conformance server --url "http://127.0.0.1:$port/mcp" \
  --expected-failures conformance/expected-failures.yml -o "$out/results" >"$out/run.log" 2>&1 || {
  status=$?
  cat "$out/run.log"
  echo "conformance: FAILED (exit $status)" >&2
  exit $status
}
sed -n '/=== SUMMARY ===/,$p' "$out/run.log"
echo "conformance: passed (expected failures as listed in conformance/expected-failures.yml)"
