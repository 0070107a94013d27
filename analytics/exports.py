"""Every CSV the analytics write, through one function: a header row, then the values as they are
(rates as fractions, no value as an empty cell, times in ISO 8601). Anything a CSV cell must be
made safe from (spreadsheet formulas in client names, say) is done here, once, for every export."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from datetime import datetime

from django.http import HttpResponse

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a cell as a formula (OWASP, "CSV Injection")."""


def cell(value: object) -> object:
    """A value as a CSV cell a spreadsheet shows and never runs: a text starting with
    `FORMULA_PREFIXES` (a host's name is whatever its client sent) gets a leading single quote, as
    OWASP advises (the csv writer quotes whatever holds a delimiter, a quote or a line break); no
    value is an empty cell; numbers stay numbers; times are ISO 8601."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def csv_response(header: Sequence[str], rows: Iterable[Sequence[object]], filename: str) -> HttpResponse:
    """`rows` under `header` as a CSV download named `filename`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([cell(name) for name in header])
    writer.writerows([cell(value) for value in row] for row in rows)
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
