"""The map app stays small as sent (issue budget: 70,000 bytes, 20,000 gzipped), and sending it
compact drops only what no browser reads."""

from __future__ import annotations

import gzip

from tools.widgets import MAX_PAGE_BYTES, MAX_PAGE_GZIP_BYTES, compact, map_app


def test_the_map_app_as_sent_fits_its_budget():
    page = map_app().html.encode()

    assert len(page) < MAX_PAGE_BYTES
    assert len(gzip.compress(page, 9)) < MAX_PAGE_GZIP_BYTES


def test_compacting_drops_indentation_blank_lines_and_whole_line_comments_only():
    source = "<script>\n  // why\n  const a = 1\n\n  f(a) // kept: code before it\n    + 2;\n</script>\n"

    assert compact(source) == "<script>\nconst a = 1\nf(a) // kept: code before it\n+ 2;\n</script>"
