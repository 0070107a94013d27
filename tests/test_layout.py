"""The house rules a reader relies on, checked so they cannot drift (docs/adr/0038-three-packages.md):
rooms a reader can hold, and code as the formatter writes it."""

from __future__ import annotations

import re
import subprocess

from tests.conftest import PACKAGES, REPO

MAX_MODULE_LINES = 600
"""No product module longer than this (migrations aside: they are written once and never read twice)."""
MAX_FORMATTER_ESCAPES = 20
"""`# fmt: skip` and `# fmt: off` together, in the whole repository, each with its reason in the
comment line just above it."""


ESCAPE = re.compile(r"^\s*#\s*fmt:\s*(off|skip)\s*$|\S\s+#\s*fmt:\s*skip\s*$")
"""A formatter escape: `# fmt: off` (or `skip`) on a line of its own, or `# fmt: skip` after code."""


def tracked(*patterns: str) -> list[str]:
    listed = subprocess.run(["git", "ls-files", *patterns], cwd=REPO, capture_output=True, text=True, check=True)
    return listed.stdout.split()


def test_no_product_module_is_longer_than_a_reader_can_hold():
    modules = [path for path in tracked(*(f"{package}/*.py" for package in PACKAGES)) if "/migrations/" not in path]
    lengths = {path: len((REPO / path).read_text().splitlines()) for path in modules}

    assert {path: lines for path, lines in lengths.items() if lines > MAX_MODULE_LINES} == {}


def test_formatter_escapes_are_few_and_each_says_why():
    escapes = []
    for path in tracked("*.py"):
        lines = (REPO / path).read_text().splitlines()
        for number, line in enumerate(lines):
            if ESCAPE.search(line):
                before = lines[number - 1].strip() if number else ""
                escapes.append((f"{path}:{number + 1}", before.startswith("#")))

    assert len(escapes) <= MAX_FORMATTER_ESCAPES
    assert [where for where, explained in escapes if not explained] == [], "say why in a comment line just above"
