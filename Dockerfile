# The server as a container image: `tomtom-maps-mcp serve` on port 8000, non-root, runs with a
# read-only root file system (everything it writes goes to /data), healthy once /readyz answers.
# Build and run: docs/deploy.md ("Container image"). PYTHON_IMAGE: any Debian-based image with
# Python >= 3.12, python3 -m venv and pip (the official python:*-slim images are); by default the
# official 3.13 slim image pinned by digest, so every build starts from the same bytes
# (.github/dependabot.yml proposes each new digest as a pull request).
ARG PYTHON_IMAGE=python:3.13-slim@sha256:7c61056e61ac89e852de05f3dc6fa51a6dd2181797bceed46aa725dd7cb2cd3b

# --- build: the wheel, then an environment with it and the locked dependencies ------------------
# A C compiler builds the simplifier's kernel into the wheel (setup.py; the build fails without it).
FROM ${PYTHON_IMAGE} AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md LICENSE requirements.lock ./
COPY core core
COPY tomtom_mcp tomtom_mcp
COPY tools tools
COPY governance governance
COPY protocol protocol
COPY analytics analytics
COPY tenants tenants
COPY authserver authserver
# The dependencies only as requirements.lock pins them, each file checked against its hash.
RUN python3 -m venv /opt/tomtom-maps-mcp \
    && /opt/tomtom-maps-mcp/bin/pip install --no-cache-dir --quiet --require-hashes -r requirements.lock \
    && /opt/tomtom-maps-mcp/bin/pip wheel --no-cache-dir --quiet --no-deps --wheel-dir /wheels . \
    && /opt/tomtom-maps-mcp/bin/pip install --no-cache-dir --quiet --no-deps /wheels/*.whl \
    && /opt/tomtom-maps-mcp/bin/python -c "import tools.geometry._kernel"

# --- run: the environment alone, as an unprivileged user ---------------------------------------
FROM ${PYTHON_IMAGE}
# The MCP Registry checks that an `oci` package's image names its server.json entry.
LABEL io.modelcontextprotocol.server.name="io.github.tomtom-maps-mcp/tomtom-maps-mcp" \
      org.opencontainers.image.source="https://github.com/tomtom-maps-mcp/tomtom-maps-mcp" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN groupadd --gid 10001 tomtom-mcp \
    && useradd --uid 10001 --gid 10001 --home-dir /data --no-create-home tomtom-mcp \
    && mkdir /data && chown 10001:10001 /data
COPY --from=build /opt/tomtom-maps-mcp /opt/tomtom-maps-mcp
ENV PATH=/opt/tomtom-maps-mcp/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    HOME=/data \
    TOMTOM_MCP_DATA_DIR=/data
VOLUME ["/data"]
USER 10001:10001
WORKDIR /data
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
    CMD ["python3", "-c", "import urllib.request as r; r.urlopen('http://127.0.0.1:8000/readyz', timeout=4)"]
ENTRYPOINT ["tomtom-maps-mcp"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
