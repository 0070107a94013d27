# The TomTom Maps MCP server. `make run` serves it locally, `make test` runs everything.
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
export DJANGO_SETTINGS_MODULE := tomtom_mcp.settings

.PHONY: run serve-prod test test-python test-db test-deploy lint conformance bench browser-deps widget-deps mcpb-deps deploy-deps alert-deps alert-test lock wheel dist mcpb clean

# Installed with constraints.txt: the whole dependency tree at the versions locked there.
# .runtime: what running needs (make run, serve-prod); .installed: that and the test tools.
$(VENV)/.runtime: pyproject.toml setup.py constraints.txt tools/geometry/_kernel.c
	@test -x $(PY) || "$$(scripts/find-python.sh)" -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e .
	@touch $@

$(VENV)/.installed: $(VENV)/.runtime
	$(PY) -m pip install --quiet -c constraints.txt -e '.[test]'
	@touch $@

# Re-resolve pyproject.toml's dependencies into constraints.txt, and the run-time ones with hashes
# into requirements.lock (after changing a pin); commit all three.
lock:
	@test -x $(PY) || "$$(scripts/find-python.sh)" -m venv $(VENV)
	$(PY) scripts/lock.py

# The console script's `serve`: migrates the embedded database, collects the static files, runs uvicorn.
run: $(VENV)/.runtime
	$(PY) manage.py migrate --no-input
	@scripts/connect-help.sh http://$(HOST):$(PORT)/mcp
	$(VENV)/bin/tomtom-maps-mcp serve --host $(HOST) --port $(PORT)

serve-prod: $(VENV)/.runtime
	$(PY) manage.py migrate --no-input
	$(PY) manage.py collectstatic --no-input --verbosity 0
	$(VENV)/bin/gunicorn -c gunicorn.conf.py tomtom_mcp.asgi:application

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy core tools governance protocol analytics tomtom_mcp tenants authserver
	$(PY) manage.py check --fail-level ERROR
	@# The database group of the tool-surface checks, on a fresh database migrated from the fixture.
	@rm -f /tmp/tomtom-mcp-lint.sqlite3
	DATABASE_URL=sqlite:////tmp/tomtom-mcp-lint.sqlite3 $(PY) manage.py migrate --no-input -v0
	DATABASE_URL=sqlite:////tmp/tomtom-mcp-lint.sqlite3 $(PY) manage.py check --deploy --database default --tag tool_surface

test-python: $(VENV)/.installed
	$(PY) -m pytest -q

conformance: $(VENV)/.installed
	scripts/conformance.sh $(PY)

test: lint test-python conformance

# The database tests again on PostgreSQL (CI: DATABASE_URL=postgres://postgres@127.0.0.1:5432/test).
# Refuses anything else: the suite would pass on SQLite and prove nothing about PostgreSQL.
test-db: $(VENV)/.installed
	@case "$$DATABASE_URL" in postgres://*|postgresql://*) ;; *) \
		scheme="$${DATABASE_URL%%:*}"; \
		echo "make test-db: DATABASE_URL must be a PostgreSQL URL (postgres://user@host:5432/name), not $${scheme:-unset}" >&2; \
		exit 2;; esac
	$(PY) -m pytest -q -m "not browser and not packaging" tests

# deploy/ for real: 3 replicas on PostgreSQL behind nginx on loopback (DATABASE_ADMIN_URL creates
# and drops a deploytest_<random> database; default postgres://postgres@127.0.0.1:5432/postgres).
test-deploy: $(VENV)/.installed
	$(PY) scripts/deploy_test.py

deploy-deps:
	@command -v nginx >/dev/null || test -x /usr/sbin/nginx || (apt-get update -qq && apt-get install -y -qq nginx >/dev/null)

# promtool (Debian's prometheus), for the alerting rules' unit tests and the Grafana dashboard's queries
# (deploy/prometheus/, deploy/grafana/), and amtool (Debian's prometheus-alertmanager), for the example
# Alertmanager config (deploy/alertmanager/); tests/test_alerts.py and tests/test_grafana.py run them too.
alert-deps:
	@command -v promtool >/dev/null || (apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus >/dev/null)
	@command -v amtool >/dev/null || (apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus-alertmanager >/dev/null)

alert-test:
	promtool check rules deploy/prometheus/tomtom-mcp-alerts.yml
	cd deploy/prometheus && promtool test rules tomtom-mcp-alerts.test.yml
	amtool check-config deploy/alertmanager/alertmanager.yml

bench: $(VENV)/.installed
	$(PY) bench/bench_simplify.py
	$(PY) bench/bench_simplify.py --cold
	$(PY) bench/bench_memory.py
	$(PY) bench/bench_http.py
	$(PY) bench/bench_traces.py
	$(PY) bench/bench_fitting.py
	$(PY) bench/bench_soak.py

browser-deps:
	@test -x /usr/bin/chromium || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)

# MapLibre GL JS, the MCP Apps SDK (AppBridge, v2 MCP client) and esbuild for the widget browser tests
# (tests/widgets/test_browser.py, test_sdk_host.py), pinned in tests/widgets/js/package-lock.json.
widget-deps: browser-deps
	cd tests/widgets/js && npm ci --no-audit --no-fund --ignore-scripts

# @anthropic-ai/mcpb (pinned in deploy/mcpb/package-lock.json): validates and packs the Claude Desktop bundle.
mcpb-deps:
	cd deploy/mcpb && npm ci --no-audit --no-fund --ignore-scripts

# The wheel (dist/tomtom_maps_mcp-VERSION-cp312-abi3-<platform>.whl, the simplifier's kernel compiled
# in): everything the server needs at run time, for this machine only (PyPI refuses its plain
# `linux` tag: `make dist` makes the files a release uploads).
wheel: $(VENV)/.runtime
	$(PY) -m pip wheel --quiet --no-deps --wheel-dir dist .

# What a release uploads from a Linux machine, in $(DIST): the sdist, and the wheel built from it
# alone (no build directory of the checkout's can leak into it) repaired to a manylinux tag
# (auditwheel), both passing `twine check --strict`. The other
# platforms' wheels come from .github/workflows/release.yml (docs/deploy.md, "Releasing").
DIST ?= dist
dist: $(VENV)/.installed
	rm -rf $(DIST)/build && mkdir -p $(DIST)/build
	$(VENV)/bin/uv build --quiet --sdist --out-dir $(DIST)/build .
	$(VENV)/bin/uv build --quiet --wheel --out-dir $(DIST)/build $(DIST)/build/*.tar.gz  # from the sdist alone
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/auditwheel repair --wheel-dir $(DIST) $(DIST)/build/*.whl
	mv $(DIST)/build/*.tar.gz $(DIST)/
	rm -rf $(DIST)/build
	$(VENV)/bin/twine check --strict $(DIST)/*.tar.gz $(DIST)/*manylinux*.whl

# The Claude Desktop bundle (dist/tomtom-maps-mcp.mcpb); the host installs the package from PyPI with uv.
mcpb: mcpb-deps
	cd deploy/mcpb && npx --no-install mcpb validate manifest.json && npx --no-install mcpb pack . ../../dist/tomtom-maps-mcp.mcpb

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache dist build *.egg-info
