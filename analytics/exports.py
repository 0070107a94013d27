"""Every CSV the analytics write, through one function: a header row, then the values as they are
(rates as fractions, no value as an empty cell, times in ISO 8601). Anything a CSV cell must be
made safe from (spreadsheet formulas in client names, say) is done here, once, for every export."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from datetime import datetime

from django.http import HttpResponse


def cell(value: object) -> object:
    """A value as a CSV cell."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat()
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
