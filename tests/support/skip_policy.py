"""No silent gaps in CI: a skipped test fails the run unless tests/allowed_skips.toml allows it.

A pytest plugin (registered by tests/conftest.py). With `CI` set to `true`, `1` or `yes` in the
environment, every skip of the run, at collection (a module that skips itself) or at setup, call
or teardown, is checked against the allow-list. A skip is allowed when an entry's `test` is its
node id, or a module, class or test that contains it (`tests/a.py` covers `tests/a.py::test_b`,
and `tests/a.py::test_b` covers `tests/a.py::test_b[x]`), *and* the entry's `reason` is exactly
the reason the skip gave, so an allowed test that starts skipping for another reason is caught.
Each entry also says `why` the skip leaves no gap. Any other skip turns a passing run's exit
status into "tests failed", and the summary lists each such skip with its reason and location.

Without `CI`, skips are reported as pytest always does. Expected failures (xfail) are not skips.
The allow-list is read, and its entries checked for the three fields, on every run.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ALLOW_LIST = Path("tests") / "allowed_skips.toml"
"""The allow-list, relative to pytest's rootdir."""

CI_VALUES = frozenset({"true", "1", "yes"})


@dataclass(frozen=True)
class Skip:
    """One skip of the run: what skipped, why it says it did, and where it called skip."""

    nodeid: str
    reason: str
    location: str


@dataclass(frozen=True)
class AllowedSkip:
    """An allow-list entry: `test` may skip saying `reason`, which is harmless because of `why`."""

    test: str
    reason: str
    why: str

    def covers(self, skip: Skip) -> bool:
        in_scope = skip.nodeid == self.test or skip.nodeid.startswith((f"{self.test}::", f"{self.test}["))
        return in_scope and skip.reason == self.reason


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in CI_VALUES


def load_allow_list(path: Path) -> list[AllowedSkip]:
    """The entries of `path` (an absent file allows nothing); a malformed entry is a usage error."""
    if not path.is_file():
        return []
    try:
        entries = tomllib.loads(path.read_text()).get("skip", [])
    except tomllib.TOMLDecodeError as error:
        raise pytest.UsageError(f"{path}: {error}") from error
    if not isinstance(entries, list):
        raise pytest.UsageError(f"{path}: `skip` must be an array of tables ([[skip]])")
    allowed = []
    for number, entry in enumerate(entries, start=1):
        if not (
            isinstance(entry, dict)
            and entry.keys() == {"test", "reason", "why"}
            and all(isinstance(value, str) and value.strip() for value in entry.values())
        ):
            raise pytest.UsageError(f"{path}: [[skip]] {number} needs exactly test, reason and why, non-empty strings")
        allowed.append(AllowedSkip(**entry))
    return allowed


def skip_of(report: pytest.CollectReport | pytest.TestReport) -> Skip | None:
    """The skip `report` records, or None (not skipped, or an expected failure)."""
    if not report.skipped or hasattr(report, "wasxfail"):
        return None
    if isinstance(report.longrepr, tuple):
        path, line, message = report.longrepr
        location = f"{path}:{line}" if line is not None else str(path)
    else:
        message, location = str(report.longrepr), report.nodeid
    return Skip(report.nodeid, message.removeprefix("Skipped: "), location)


class SkipPolicy:
    """Collects the run's skips and fails a CI run that has a skip the allow-list does not cover."""

    def __init__(self, allowed: list[AllowedSkip], rootpath: Path) -> None:
        self.allowed = allowed
        self.rootpath = rootpath
        self.skips: dict[str, Skip] = {}
        self.unexpected: list[Skip] = []

    def record(self, report: pytest.CollectReport | pytest.TestReport) -> None:
        if (skip := skip_of(report)) is not None:
            self.skips.setdefault(skip.nodeid, skip)

    def relative(self, location: str) -> str:
        path = Path(location)
        return str(path.relative_to(self.rootpath)) if path.is_relative_to(self.rootpath) else location

    @pytest.hookimpl
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self.record(report)

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.record(report)

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not in_ci():
            return
        self.unexpected = [s for s in self.skips.values() if not any(a.covers(s) for a in self.allowed)]
        if self.unexpected and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.unexpected:
            return
        terminalreporter.section("skips not allowed in CI", sep="=", red=True, bold=True)
        for skip in self.unexpected:
            terminalreporter.line(f"{skip.nodeid}: {skip.reason} ({self.relative(skip.location)})")
        terminalreporter.line(
            f"CI=true: {len(self.unexpected)} test(s) skipped. Make them run, or add each to {ALLOW_LIST}"
            " with its exact reason and why the skip leaves no gap."
        )


def pytest_configure(config: pytest.Config) -> None:
    policy = SkipPolicy(load_allow_list(config.rootpath / ALLOW_LIST), config.rootpath)
    config.pluginmanager.register(policy, "skip_policy")
