"""Chromium for the browser tests: where it is, how it starts, and one way to launch it.

Every browser test launches Debian's Chromium (`make widget-deps` installs it) headless, with
the same flags; the `browser` fixture (tests/conftest.py, per module in tests/widgets/) and
`launched()` both go through here."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
NEEDS_CHROMIUM = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium: apt-get install -y chromium"),
]
"""A browser test module's `pytestmark`."""


@contextmanager
def launched() -> Iterator[Any]:
    """A headless Chromium, closed when the block ends."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
