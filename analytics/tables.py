"""The dashboards' tables: one shape for every table, sorted on the server by any column, the same
rows as CSV.

A `Table` is columns and rows of values. Each column knows how to show a value (`show`), what
a cell links to (`link`, e.g. the drill-down behind a failure count) and whether it is a number
(right-aligned, compared as a number). Sorting is a query parameter per table,
`<table id>-sort=<column>` (`-<column>` for descending), so every sorted view is a link, pages
with several tables sort each on its own, and the CSV link keeps the order. Rows without a value
sort last either way. CSV goes through `analytics.exports.csv_response`, the one CSV writer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, QueryDict

Row = dict[str, Any]


def as_count(value: Any) -> str:
    return "—" if value is None else f"{value:,}"


def as_rate(value: Any) -> str:
    return "—" if value is None else f"{value:.1%}"


def as_number(value: Any) -> str:
    return "—" if value is None else f"{value:,.1f}"


@dataclass(frozen=True, slots=True)
class Col:
    name: str
    title: str
    description: str = ""
    numeric: bool = False
    show: Callable[[Any], str] = str
    link: Callable[[Row], str] | None = None
    """The URL a cell links to ("" for none)."""
    title_of: Callable[[Row], str] | None = None
    """A cell's tooltip (its sample, say)."""
    muted: Callable[[Row], bool] | None = None
    """Whether a cell is greyed (a rate from a small sample)."""
    wrap: bool = False
    """Long text (client names, messages): wraps anywhere so the table fits the page."""
    sort_key: str = ""
    """Sort by this row value instead of the column's own (e.g. a breakdown sorted by its total)."""
    header: bool = False
    """The row's header cell (`<th scope="row">`)."""


@dataclass(frozen=True, slots=True)
class Cell:
    text: str
    link: str = ""
    title: str = ""
    muted: bool = False
    numeric: bool = False
    wrap: bool = False
    header: bool = False


@dataclass(frozen=True, slots=True)
class Heading:
    name: str
    title: str
    description: str
    sort_link: str
    sorted_as: str
    """"ascending", "descending" or "" (not the sort column): the `aria-sort` value."""
    numeric: bool


@dataclass
class Table:
    id: str
    title: str
    columns: Sequence[Col]
    rows: list[Row]
    default_sort: str = ""
    empty: str = "Nothing in this range."
    csv_columns: Sequence[str] | None = None
    """The CSV's columns (row keys), when they differ from the shown ones (raw values, all codes)."""
    sort: str = field(default="", init=False)

    @property
    def param(self) -> str:
        return f"{self.id}-sort"

    def sorted_by(self, request: HttpRequest | QueryDict | Mapping[str, str]) -> Table:
        """The table with its rows in the order the request asks for (or the default)."""
        params = request.GET if isinstance(request, HttpRequest) else request
        spec = params.get(self.param) or self.default_sort
        name = spec.removeprefix("-")
        column = next((c for c in self.columns if c.name == name), None)
        if column is None:
            self.sort = ""
            return self
        key = column.sort_key or column.name
        present = [row for row in self.rows if row.get(key) is not None]
        missing = [row for row in self.rows if row.get(key) is None]
        present.sort(key=lambda row: _comparable(row[key]), reverse=spec.startswith("-"))
        self.rows, self.sort = present + missing, spec
        return self

    def headings(self, request: HttpRequest) -> list[Heading]:
        result = []
        for column in self.columns:
            sorted_as = {column.name: "ascending", f"-{column.name}": "descending"}.get(self.sort, "")
            # First click: numbers largest first, text A to Z; again: the other way.
            first = f"-{column.name}" if column.numeric else column.name
            flip = column.name if self.sort == f"-{column.name}" else f"-{column.name}"
            target = flip if sorted_as else first
            params = {**request.GET.dict(), self.param: target}
            params.pop("page", None)
            result.append(
                Heading(
                    column.name, column.title, column.description, f"?{urlencode(params)}", sorted_as, column.numeric
                )
            )
        return result

    def cells(self) -> list[list[Cell]]:
        return [
            [
                Cell(
                    column.show(row.get(column.name)),
                    column.link(row) if column.link else "",
                    column.title_of(row) if column.title_of else "",
                    bool(column.muted and column.muted(row)),
                    column.numeric,
                    column.wrap,
                    column.header,
                )
                for column in self.columns
            ]
            for row in self.rows
        ]

    def context(self, request: HttpRequest) -> dict[str, Any]:
        """What `analytics/_table.html` renders."""
        return {
            "table": self,
            "headings": self.headings(request),
            "body": self.cells(),
            "csv_link": f"?{urlencode({**request.GET.dict(), 'csv': self.id})}",
        }

    def csv(self) -> tuple[list[str], list[list[Any]]]:
        """The header and the rows, raw values (rates as fractions, None as empty)."""
        names = list(self.csv_columns or [c.name for c in self.columns])
        return names, [[row.get(name) for name in names] for row in self.rows]


def _comparable(value: Any) -> Any:
    return value.casefold() if isinstance(value, str) else value
