"""The release workflow cannot run here (docs/adr/0048-release-artifacts.md), so it is checked as far
as a machine without GitHub can: against SchemaStore's schema of GitHub workflows (vendored by
check-jsonschema), then for what the schema cannot see: the jobs' order, the steps each expression
names, the permissions each publishing job needs, actions pinned to a release, and the names the
workflow shares with the registry entry and the bundle."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import REPO

pytestmark = pytest.mark.packaging

WORKFLOW = REPO / ".github" / "workflows" / "release.yml"
CHECK_JSONSCHEMA = Path(sys.executable).with_name("check-jsonschema")
JOBS: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text())["jobs"]


def test_the_workflow_is_valid_under_githubs_workflow_schema():
    done = subprocess.run(
        [CHECK_JSONSCHEMA, "--builtin-schema", "vendor.github-workflows", WORKFLOW],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_schema_check_refuses_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    step:\n      - run: echo\n")
    done = subprocess.run(
        [CHECK_JSONSCHEMA, "--builtin-schema", "vendor.github-workflows", broken], capture_output=True, text=True
    )
    assert done.returncode == 1 and "'step' was unexpected" in done.stdout


def test_each_job_needs_only_jobs_that_exist_and_publishing_waits_for_every_check():
    for name, job in JOBS.items():
        needs = job.get("needs", [])
        assert set([needs] if isinstance(needs, str) else needs) <= set(JOBS), name

    def before(job: str) -> set[str]:
        needs = JOBS[job].get("needs", [])
        direct = {needs} if isinstance(needs, str) else set(needs)
        return direct.union(*(before(each) for each in direct)) if direct else set()

    checks = {"check-version", "wheels", "newest-python", "sdist", "bundle"}
    for publisher in ("pypi", "github-release", "image", "registry"):
        assert checks <= before(publisher), publisher
    assert {"pypi", "github-release", "image"} <= before("registry")  # the entry names what exists


def test_every_step_output_an_expression_reads_comes_from_a_step_of_its_job():
    for name, job in JOBS.items():
        ids = {step["id"] for step in job.get("steps", []) if "id" in step}
        named = set(re.findall(r"steps\.([\w-]+)\.outputs", json.dumps(job)))
        assert named <= ids, name


def test_publishing_jobs_hold_the_permissions_they_need_and_no_more_than_read_by_default():
    assert yaml.safe_load(WORKFLOW.read_text())["permissions"] == {"contents": "read"}
    assert JOBS["pypi"]["permissions"] == {"id-token": "write"}  # trusted publishing: no token stored
    assert JOBS["registry"]["permissions"] == {"id-token": "write"}
    assert JOBS["github-release"]["permissions"]["contents"] == "write"
    assert JOBS["image"]["permissions"]["packages"] == "write"
    steps = json.dumps(JOBS["pypi"])
    assert "pypa/gh-action-pypi-publish" in steps and "password" not in steps


def test_every_action_is_pinned_to_a_release():
    uses = [step["uses"] for job in JOBS.values() for step in job.get("steps", []) if "uses" in step]
    assert uses and all(re.fullmatch(r"[\w.-]+/[\w.-]+@(v\d+(\.\d+)*|release/v\d+)", each) for each in uses), uses


def test_the_image_tag_and_the_smoke_test_are_those_the_registry_entry_and_the_repository_name():
    server = json.loads((REPO / "server.json").read_text())
    (oci,) = [package for package in server["packages"] if package["registryType"] == "oci"]
    image = json.dumps(JOBS["image"])
    assert "ghcr.io/${{ github.repository }}:${{ steps.version.outputs.version }}" in image
    assert oci["identifier"].startswith("ghcr.io/tomtom-maps-mcp/tomtom-maps-mcp:")
    commands = json.dumps(JOBS["wheels"]) + json.dumps(JOBS["newest-python"])
    assert commands.count("scripts/smoke_wheel.py") == 2 and (REPO / "scripts" / "smoke_wheel.py").is_file()


def test_dependabot_keeps_the_base_image_digest_and_the_actions_current():
    config = REPO / ".github" / "dependabot.yml"
    done = subprocess.run(
        [CHECK_JSONSCHEMA, "--builtin-schema", "vendor.dependabot", config], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ecosystems = {update["package-ecosystem"] for update in yaml.safe_load(config.read_text())["updates"]}
    assert ecosystems == {"docker", "github-actions"}
