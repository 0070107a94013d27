"""The Prometheus alerting rules in deploy/prometheus: valid, unit-tested by promtool, and reading
only metrics the server exports, with the labels it exports them with, each alert documented
with its threshold."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from analytics.metrics import INGESTION_GAUGES, REGISTRY
from tests.conftest import REPO

RULES = REPO / "deploy" / "prometheus" / "tomtom-mcp-alerts.yml"
TESTS = RULES.with_name("tomtom-mcp-alerts.test.yml")
DOCS = (REPO / "docs" / "analytics.md").read_text()
PROMTOOL = shutil.which("promtool")


@pytest.mark.skipif(PROMTOOL is None, reason="needs promtool: make alert-deps (Debian's prometheus)")
def test_promtool_checks_the_rules_and_their_unit_tests_pass():
    checked = subprocess.run([PROMTOOL, "check", "rules", str(RULES)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = subprocess.run([PROMTOOL, "test", "rules", TESTS.name], cwd=TESTS.parent, capture_output=True, text=True)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout


def test_the_rules_read_only_exported_metrics_and_every_alert_is_documented_and_tested():
    rules = RULES.read_text()
    exported = {f"{metric.name}_total" if metric.type == "counter" else metric.name for metric in REGISTRY.collect()}
    exported |= {name for _, name, _ in INGESTION_GAUGES}
    used = set(re.findall(r"\b(tomtom_mcp_[a-z_]+)", rules))
    assert used - exported == set()
    alerts = re.findall(r"- alert: (\w+)", rules)
    assert len(alerts) == 5
    assert [name for name in alerts if f"`{name}`" not in DOCS] == []
    assert [name for name in alerts if f"alertname: {name}" not in TESTS.read_text()] == []


def test_every_label_a_rule_groups_by_is_exported_with_its_metric():
    """A scrape exports `client` as `host_family` (analytics/metrics.py): every label a rule sums
    a metric by is one the metric is exported with."""
    exported = {
        f"{collector._name}_total" if collector._type == "counter" else collector._name:  # prometheus-client's own
        {"host_family" if name == "client" else name for name in collector._labelnames}
        for collector in REGISTRY._collector_to_names
    }
    grouped = re.findall(r"sum by \(([^)]*)\) \((?:increase|rate)\((tomtom_mcp_[a-z_]+)", RULES.read_text())
    assert ("host_family", "tomtom_mcp_widget_deliveries_total") in grouped
    for labels, metric in grouped:
        missing = {label.strip() for label in labels.split(",")} - exported[metric]
        assert not missing, f"{metric} is summed by {sorted(missing)}, which it is not exported with"
