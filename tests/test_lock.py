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
