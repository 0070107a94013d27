"""constraints.txt (`make lock`) agrees with pyproject.toml's pins, so `make` can install at all."""

import re
import tomllib

from packaging.requirements import Requirement

from tests.conftest import REPO


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_lock_pins_every_direct_dependency_at_its_pyproject_version():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = [line for group in project["optional-dependencies"].values() for line in group]
    direct = [
        r
        for r in map(Requirement, [*project["dependencies"], *extras])
        if canonical(r.name) != canonical(project["name"])
    ]
    lines = [line for line in (REPO / "constraints.txt").read_text().splitlines() if not line.startswith("#")]
    locked = {canonical(name): version for name, version in (line.split("==") for line in lines)}
    assert canonical(project["name"]) not in locked, "the project itself is not a constraint"
    stale = {
        r.name: (str(r.specifier), locked.get(canonical(r.name)))
        for r in direct
        if locked.get(canonical(r.name)) not in r.specifier
    }
    assert stale == {}, "pyproject.toml and constraints.txt disagree: run `make lock`"


def test_the_hashed_lock_holds_the_run_time_dependencies_at_the_locked_versions_each_with_hashes():
    """requirements.lock (`make lock`, installed by the container image with `--require-hashes`)
    pins every run-time dependency at constraints.txt's version, and names each file's hash."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    text = (REPO / "requirements.lock").read_text()
    entries = re.findall(r"^([A-Za-z0-9_.-]+)==([^\s;\\]+)[^\n]*((?:\\\n\s+--hash=sha256:[0-9a-f]{64})+)", text, re.M)
    hashed = {canonical(name): version for name, version, _ in entries}
    pins = [line for line in text.splitlines() if re.match(r"^[A-Za-z0-9_.-]+==", line)]
    assert len(pins) == len(entries), "every pinned requirement is followed by its hashes"
    lines = [line for line in (REPO / "constraints.txt").read_text().splitlines() if not line.startswith("#")]
    locked = {canonical(name): version for name, version in (line.split("==") for line in lines)}
    runtime = {canonical(Requirement(line).name) for line in project["dependencies"]}
    assert runtime <= set(hashed), "run `make lock`: a run-time dependency is missing from requirements.lock"
    differ = {
        name: (version, locked[name]) for name, version in hashed.items() if name in locked and locked[name] != version
    }
    assert differ == {}, "requirements.lock and constraints.txt disagree: run `make lock`"
