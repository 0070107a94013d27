"""The container recipe holds together: every file it copies exists and reaches the builder, every
command it runs is one this package installs, it runs as a non-root user with its writes in its
volume, and its health check asks a URL the server answers.

(This machine cannot pull a base image, so CI does not build it; docs/adr/0031-installable-package.md.)
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from django.urls import resolve

from tests.conftest import PACKAGES, REPO
from tomtom_mcp.env import ENV_VARS

DOCKERFILE = (REPO / "Dockerfile").read_text()
INSTRUCTIONS = [
    (line.split(maxsplit=1)[0].upper(), line.split(maxsplit=1)[1] if " " in line else "")
    for line in re.sub(r"\\\n\s*", " ", DOCKERFILE).splitlines()
    if line.strip() and not line.lstrip().startswith("#")
]
SCRIPTS = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]


def values(keyword: str) -> list[str]:
    return [value for name, value in INSTRUCTIONS if name == keyword]


def test_it_builds_in_stages_and_runs_the_last_as_a_numeric_non_root_user():
    stages = values("FROM")
    assert len(stages) == 2 and stages[0].endswith(" AS build")
    (user,) = values("USER")
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and int(uid) > 0 and gid.isdigit() and int(gid) > 0
    assert [name for name, _ in INSTRUCTIONS].index("USER") > [name for name, _ in INSTRUCTIONS].index("FROM", 1)


def test_every_file_it_copies_exists_and_reaches_the_builder():
    ignore = [line for line in (REPO / ".dockerignore").read_text().splitlines() if line and not line.startswith("#")]

    def sent(path: str) -> bool:
        """Whether .dockerignore lets `path` through (its last matching rule decides)."""
        verdict = True
        for rule in ignore:
            negated, pattern = rule.startswith("!"), rule.lstrip("!").rstrip("/")
            if fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path.split("/")[0], pattern):
                verdict = negated
        return verdict

    copied = [shlex.split(value) for value in values("COPY") if not value.startswith("--from")]
    sources = [source for args in copied for source in args[:-1]]
    assert {"pyproject.toml", "LICENSE", "requirements.lock", *PACKAGES} <= set(sources)
    assert [source for source in sources if not (REPO / source).exists()] == []
    assert [source for source in sources if not sent(source)] == []


def test_it_starts_the_console_script_as_the_server_and_checks_readiness():
    (entrypoint,) = values("ENTRYPOINT")
    (command,) = values("CMD")
    assert json.loads(entrypoint) == ["tomtom-maps-mcp"] and "tomtom-maps-mcp" in SCRIPTS
    args = json.loads(command)
    assert args[0] == "serve" and args[args.index("--port") + 1] in values("EXPOSE")
    (healthcheck,) = values("HEALTHCHECK")
    url = re.search(r"http://127\.0\.0\.1:(\d+)(/\w+)", healthcheck)
    assert url and url.group(1) in values("EXPOSE")
    assert resolve(url.group(2)).url_name == "readyz"


def test_everything_it_writes_goes_to_its_volume():
    """Read-only root file system: the data directory (database, static files) is the volume."""
    env = dict(re.findall(r"(\w+)=(\S+)", " ".join(values("ENV"))))
    assert env["TOMTOM_MCP_DATA_DIR"] in json.loads(values("VOLUME")[0]) == ["/data"]
    assert "TOMTOM_MCP_DATA_DIR" in ENV_VARS
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"


def test_the_builder_compiles_the_simplifiers_kernel_and_the_image_refuses_to_build_without_it():
    """setup.py's extension is optional, so a builder without a C compiler would quietly make a
    slower image: the build stage installs one and imports the built kernel before it ends."""
    build = DOCKERFILE.split("\nFROM ", 2)[1]
    assert re.search(r"apt-get install [^\n]*\bgcc\b", re.sub(r"\\\n\s*", " ", build))
    assert "setup.py" in [source for value in values("COPY") for source in shlex.split(value)[:-1]]
    assert 'python -c "import tools.geometry._kernel"' in build


def test_the_base_image_is_pinned_by_digest_and_dependencies_by_hash():
    """Every build starts from the same base image and installs exactly the files the lock names."""
    (default,) = re.findall(r"^ARG PYTHON_IMAGE=(\S+)$", DOCKERFILE, flags=re.M)
    assert re.fullmatch(r"python:3\.1[2-9]-slim@sha256:[0-9a-f]{64}", default), default
    build = re.sub(r"\\\n\s*", " ", DOCKERFILE.split("\nFROM ", 2)[1])
    assert "pip install --no-cache-dir --quiet --require-hashes -r requirements.lock" in build
    assert "--no-deps /wheels/*.whl" in build  # the package itself adds no unhashed dependency


def test_the_wheel_builds_from_only_what_the_dockerfile_copies(tmp_path):
    """The builder's context is enough to build the wheel (a file the build needs and the
    Dockerfile leaves out, like the licence, fails here, not at release)."""
    copied = [shlex.split(value) for value in values("COPY") if not value.startswith("--from")]
    for args in copied:
        for source in args[:-1]:
            target = tmp_path / source
            if (REPO / source).is_dir():
                shutil.copytree(REPO / source, target, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"))
            else:
                shutil.copy2(REPO / source, target)
    uv = Path(sys.executable).with_name("uv")
    done = subprocess.run(
        [uv, "build", "--wheel", "--out-dir", tmp_path / "wheels", tmp_path],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = (tmp_path / "wheels").glob("tomtom_maps_mcp-*.whl")
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in zipfile.ZipFile(wheel).namelist())
