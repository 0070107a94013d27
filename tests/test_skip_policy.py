"""The CI skip policy (tests/support/skip_policy.py): a skip fails a CI run unless it is allowed."""

from __future__ import annotations

import re
import tomllib

import pytest

from tests.conftest import REPO
from tests.support.skip_policy import ALLOW_LIST

SAMPLE = """
import pytest


def test_runs():
    pass


def test_skips_itself():
    pytest.skip("no printer here")


@pytest.mark.skipif(True, reason="needs the moon")
@pytest.mark.parametrize("phase", ["new", "full"])
def test_per_phase(phase):
    pass


@pytest.mark.xfail(reason="known bug", strict=True)
def test_known_bug():
    raise AssertionError
"""

MOON = """
[[skip]]
test = "test_sample.py::test_per_phase"
reason = "needs the moon"
why = "the moon pass covers it"
"""


@pytest.fixture
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    """Runs pytest on test_sample.py (and any other files) with the policy, as CI when asked."""
    pytester.makepyfile(test_sample=SAMPLE)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # only pytest and the policy

    def run(*, ci: bool, allowed: str | None = None) -> pytest.RunResult:
        if allowed is not None:
            pytester.mkdir("tests")
            (pytester.path / ALLOW_LIST).write_text(allowed)
        if ci:
            monkeypatch.setenv("CI", "true")
        else:
            monkeypatch.delenv("CI", raising=False)
        return pytester.runpytest("-p", "tests.support.skip_policy")

    return run


def test_outside_ci_skips_are_only_reported(run):
    result = run(ci=False)
    result.assert_outcomes(passed=1, skipped=3, xfailed=1)
    assert result.ret == pytest.ExitCode.OK
    assert "skips not allowed in CI" not in result.stdout.str()


def test_in_ci_an_unlisted_skip_fails_the_run_and_is_named_with_its_reason(run):
    result = run(ci=True, allowed=MOON)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*= skips not allowed in CI =*",
            "test_sample.py::test_skips_itself: no printer here (test_sample.py:*)",
            "CI=true: 1 test(s) skipped.*tests/allowed_skips.toml*",
        ]
    )
    assert "test_per_phase" not in result.stdout.str()  # both phases are allowed
    assert "test_known_bug" not in result.stdout.str()  # an expected failure is no skip


def test_in_ci_a_run_whose_skips_are_all_allowed_passes(run, pytester):
    pytester.makepyfile(test_sample=SAMPLE.replace('pytest.skip("no printer here")', "pass"))
    result = run(ci=True, allowed=MOON)
    result.assert_outcomes(passed=2, skipped=2, xfailed=1)
    assert result.ret == pytest.ExitCode.OK


def test_an_allowed_test_skipping_for_another_reason_fails(run):
    result = run(ci=True, allowed=MOON.replace("needs the moon", "needs the sun"))
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["test_sample.py::test_per_phase[[]new[]]: needs the moon *"])


def test_in_ci_a_module_that_skips_itself_fails_the_run(run, pytester):
    pytester.makepyfile(test_browser='import pytest\npytest.skip("no browser", allow_module_level=True)\n')
    result = run(ci=True, allowed=MOON)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["test_browser.py: no browser (test_browser.py:2)"])


def test_a_module_entry_allows_the_skips_inside_it(run):
    module = '[[skip]]\ntest = "test_sample.py"\nreason = "no printer here"\nwhy = "printing is tested by hand"\n'
    result = run(ci=True, allowed=MOON + module)
    assert result.ret == pytest.ExitCode.OK


@pytest.mark.parametrize(
    "entry",
    [
        '[[skip]]\ntest = "test_sample.py"\nreason = "no printer here"\n',
        '[[skip]]\ntest = "test_sample.py"\nreason = "no printer here"\nwhy = ""\n',
        '[[skip]]\ntest = "test_sample.py"\nreason = "no printer here"\nwhy = "x"\nuntil = "2027"\n',
        'skip = "test_sample.py"\n',
        "[[skip]\n",
    ],
    ids=["missing why", "empty why", "unknown field", "not a table", "not TOML"],
)
def test_a_malformed_allow_list_stops_the_run(run, entry):
    result = run(ci=False, allowed=entry)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "allowed_skips.toml" in result.stderr.str()


def test_every_allowed_skip_names_a_test_that_gives_that_reason():
    """An entry left behind by a renamed test or a reworded reason would allow nothing."""
    entries = tomllib.loads((REPO / ALLOW_LIST).read_text())["skip"]
    assert entries, "the allow-list is empty: then delete the file and this test"
    for entry in entries:
        path, _, name = entry["test"].partition("::")
        source = (REPO / path).read_text()
        assert not name or re.search(rf"\bdef {re.escape(name.split('[')[0].split('::')[-1])}\(", source), entry
        assert f'"{entry["reason"]}"' in source, entry
