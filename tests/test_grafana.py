"""The Grafana dashboard deploy/grafana/tomtom-mcp.json: every panel's PromQL parses (promtool
checks it as a recording rule) and reads only the metrics the server exports, with their labels;
it shows every exported metric and the alerts' thresholds and objectives."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
import yaml

import tests.test_alerts as alerts_test  # the module, so pytest does not collect its tests twice here
from tests.conftest import REPO

DASHBOARD = REPO / "deploy" / "grafana" / "tomtom-mcp.json"
PROMTOOL = shutil.which("promtool")
VARIABLES = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h", "$host_family": ".*"}
"""Grafana's variables as a query sees them once expanded (every host family selected)."""


def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text())


def panels() -> list[dict]:
    found = []
    for panel in dashboard()["panels"]:
        found.append(panel)
        found += panel.get("panels", [])  # a collapsed row holds its panels
    return [panel for panel in found if panel["type"] != "row"]


def expressions() -> list[tuple[str, str]]:
    """(panel title and refId, the query with Grafana's variables expanded) for every target."""
    found = []
    for panel in panels():
        for target in panel["targets"]:
            expr = target["expr"]
            for variable, value in VARIABLES.items():
                expr = expr.replace(variable, value)
            found.append((f"{panel['title']} {target['refId']}", expr))
    return found


def test_every_panel_has_a_query_a_unique_id_and_the_prometheus_data_source():
    found = panels()
    assert len(found) >= 15
    assert all(panel["targets"] and all(target.get("expr") for target in panel["targets"]) for panel in found)
    rows = [panel for panel in dashboard()["panels"] if panel["type"] == "row"]
    ids = [panel["id"] for panel in [*rows, *found]]
    assert len(ids) == len(set(ids))
    assert {panel["datasource"]["uid"] for panel in found} == {"${datasource}"}
    unexpanded = re.findall(r"\$\w+", "".join(expr for _, expr in expressions()))
    assert unexpanded == [], "a Grafana variable the test does not expand"


def test_the_panels_read_only_exported_metrics_and_labels():
    series = alerts_test.exported_series()
    problems = {title: alerts_test.label_problems(expr, series) for title, expr in expressions()}
    assert {title: found for title, found in problems.items() if found} == {}
    for variable in dashboard()["templating"]["list"]:
        if variable["type"] == "query":
            metric, label = re.fullmatch(r"label_values\((\w+), (\w+)\)", variable["definition"]).groups()
            assert label in series[metric], variable["name"]


def test_every_exported_metric_is_charted_with_the_classes_and_objectives_of_the_alerts():
    series = alerts_test.exported_series()
    text = "\n".join(expr for _, expr in expressions())
    charted = {name for name in series if re.search(rf"\b{name}\b", text)}
    metrics = {re.sub(r"_(total|bucket|count|sum)$", "", name) for name in series}
    assert sorted(metric for metric in metrics if not any(name.startswith(metric) for name in charted)) == []
    for outcomes in (alerts_test.CALLER, alerts_test.UPSTREAM, alerts_test.SERVER | alerts_test.UPSTREAM):
        assert any(set(values.split("|")) == outcomes for values in re.findall(r'outcome=~"([^"]*)"', text)), outcomes
    assert "/ 0.005" in text and "/ 0.01" in text and 'le="5.0"' in text  # the objectives' budgets
    assert "or 0 * sum by (host_family) (increase(tomtom_mcp_widget_deliveries_total" in text


@pytest.mark.skipif(PROMTOOL is None, reason="needs promtool: make alert-deps (Debian's prometheus)")
def test_promtool_parses_every_panel_query(tmp_path):
    rules = [{"record": f"grafana:panel_{index}", "expr": expr} for index, (_, expr) in enumerate(expressions())]
    path = tmp_path / "grafana-panels.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "grafana", "rules": rules}]}))
    checked = subprocess.run([PROMTOOL, "check", "rules", str(path)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"{len(rules)} rules found" in checked.stdout
