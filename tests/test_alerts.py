"""The Prometheus alerting rules in deploy/prometheus and the example Alertmanager config in
deploy/alertmanager: valid (promtool, amtool), unit-tested by promtool, reading only metrics the
server exports, with the labels it exports them with; each alert documented with its threshold
(docs/analytics.md) and its runbook (docs/runbooks.md, the anchor its `runbook_url` names), and
routed by its severity, one cause to one page."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
import yaml

from analytics.metrics import CANARY_GAUGES, INGESTION_GAUGES, REGISTRY
from core.errors import CALLER_MISTAKES, UPSTREAM_FAILURES, ErrorCode
from tests.conftest import REPO

RULES = REPO / "deploy" / "prometheus" / "tomtom-mcp-alerts.yml"
TESTS = RULES.with_name("tomtom-mcp-alerts.test.yml")
ALERTMANAGER = REPO / "deploy" / "alertmanager" / "alertmanager.yml"
DOCS = (REPO / "docs" / "analytics.md").read_text()
ALERTS_DOCS = DOCS[DOCS.index("### Alerts") : DOCS.index("## System checks")]
RUNBOOKS = (REPO / "docs" / "runbooks.md").read_text()
RUNBOOK_BASE = "https://github.com/tomtom-maps-mcp/tomtom-maps-mcp/blob/main/docs/runbooks.md#"
PROMTOOL = shutil.which("promtool")
AMTOOL = shutil.which("amtool")

SCRAPE_LABELS = {"job", "instance"}
"""Labels Prometheus adds to every scraped series (the target's)."""
PROMETHEUS_SERIES = {"up": set()}
"""Series Prometheus writes itself for every target (with SCRAPE_LABELS)."""

CALLER = {code.value for code in CALLER_MISTAKES}
UPSTREAM = {code.value for code in UPSTREAM_FAILURES}
SERVER = {code.value for code in ErrorCode} - CALLER - UPSTREAM
OUTCOMES_READ = {
    "ToolCallErrorRateHigh": SERVER,
    "CallerMistakeRateHigh": CALLER,
    "TomTomDown": UPSTREAM,
    "ErrorBudgetBurnFast": SERVER | UPSTREAM,
    "ErrorBudgetBurnSlow": SERVER | UPSTREAM,
}
"""The outcomes each rule on `tomtom_mcp_tool_calls_total` counts as its kind of failure."""


def exported_series() -> dict[str, set[str]]:
    """Every series name a scrape of /analytics/metrics (and Prometheus itself) can hold, with its
    labels: `client` exported as `host_family`, a counter as `_total`, a histogram as `_bucket`
    (with `le`), `_count` and `_sum`, plus the target's `job` and `instance` on each."""
    series: dict[str, set[str]] = {}
    for collector in REGISTRY._collector_to_names:  # prometheus-client's own
        labels = {"host_family" if name == "client" else name for name in collector._labelnames}
        if collector._type == "counter":
            series[f"{collector._name}_total"] = labels
        elif collector._type == "histogram":
            series[f"{collector._name}_bucket"] = labels | {"le"}
            series[f"{collector._name}_count"] = series[f"{collector._name}_sum"] = labels
        else:
            series[collector._name] = labels
    series |= {name: {"family"} for _, name, _ in INGESTION_GAUGES}
    series |= {name: set(labels) for name, _, labels in CANARY_GAUGES}
    series |= PROMETHEUS_SERIES
    return {name: labels | SCRAPE_LABELS for name, labels in series.items()}


def label_problems(expr: str, series: dict[str, set[str]]) -> list[str]:
    """What `expr` reads that is not exported: metric names, a selector's label, a label it groups
    or matches by (`by`, `without`, `on`, `ignoring`) that none of its metrics has."""
    problems = []
    names = set(re.findall(r"\b(tomtom_mcp_[a-z_]+)\b", expr))
    names |= {name for name in PROMETHEUS_SERIES if re.search(rf"\b{name}\s*\{{", expr)}
    problems += [f"{name} is not exported" for name in sorted(names - series.keys())]
    for name, matchers in re.findall(r"\b(tomtom_mcp_[a-z_]+|up)\s*\{([^}]*)\}", expr):
        for label in re.findall(r"(\w+)\s*(?:=~|!~|!=|=)", matchers):
            if label not in series.get(name, set()):
                problems.append(f"{name} is matched on {label}, which it is not exported with")
    made = set(re.findall(r'label_replace\([^"]*"(\w+)"', expr))
    known = set().union(*(series.get(name, set()) for name in names)) | made
    for clause in re.findall(r"\b(?:by|without|on|ignoring)\s*\(([^)]*)\)", expr):
        for label in filter(None, (part.strip() for part in clause.split(","))):
            if label not in known:
                problems.append(f"grouped or matched by {label}, which none of {sorted(names)} has")
    return problems


def github_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings."""
    headings = re.findall(r"^#+\s+(.+?)\s*$", markdown, flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def rules() -> list[dict]:
    return [rule for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]]


def alerts() -> dict[str, dict]:
    return {rule["alert"]: rule for rule in rules() if "alert" in rule}


@pytest.mark.skipif(PROMTOOL is None, reason="needs promtool: make alert-deps (Debian's prometheus)")
def test_promtool_checks_the_rules_and_their_unit_tests_pass():
    checked = subprocess.run([PROMTOOL, "check", "rules", str(RULES)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = subprocess.run([PROMTOOL, "test", "rules", TESTS.name], cwd=TESTS.parent, capture_output=True, text=True)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout


def test_the_rules_read_only_exported_metrics_and_labels():
    series = exported_series()
    problems = {name: label_problems(rule["expr"], series) for name, rule in alerts().items()}
    assert {name: found for name, found in problems.items() if found} == {}
    templated = re.findall(r"query `([^`]*)`", RULES.read_text())
    assert templated, "TomTomDown's description queries its two figures"
    assert [problem for expr in templated for problem in label_problems(expr, series)] == []


def test_every_alert_is_documented_runbooked_and_unit_tested_firing():
    found = alerts()
    assert len(found) == 16
    assert [name for name in found if f"| `{name}` |" not in ALERTS_DOCS] == []
    assert [name for name in found if not re.search(rf"^## {name}$", RUNBOOKS, flags=re.MULTILINE)] == []
    cases = [case for test in yaml.safe_load(TESTS.read_text())["tests"] for case in test.get("alert_rule_test", [])]
    fired = {case["alertname"] for case in cases if case["exp_alerts"]}
    quiet = {case["alertname"] for case in cases if not case["exp_alerts"]}
    assert sorted(found.keys() - fired) == [], "every alert has a unit test where it fires"
    assert sorted(found.keys() - quiet) == [], "and one where it must not"


def test_every_alert_has_a_severity_a_cause_and_a_runbook_url_that_exists():
    anchors = github_anchors(RUNBOOKS)
    for name, rule in alerts().items():
        assert rule["labels"]["severity"] in ("page", "ticket"), name
        assert rule["labels"]["cause"] in ("tomtom", "server", "caller", "widgets", "ingestion", "scrape"), name
        url = rule["annotations"]["runbook_url"]
        assert url.startswith(RUNBOOK_BASE), name
        assert url.removeprefix(RUNBOOK_BASE) in anchors, f"{name}: {url} names no heading of docs/runbooks.md"
        assert rule["annotations"]["summary"] and rule["annotations"]["description"], name
        assert f"| `{name}` |" in ALERTS_DOCS and rule["labels"]["severity"] in _docs_row(name), name


def _docs_row(name: str) -> str:
    return next(line for line in ALERTS_DOCS.splitlines() if line.startswith(f"| `{name}` |"))


def test_every_error_code_is_in_one_class_and_each_rule_counts_its_class():
    """Caller mistakes, upstream failures and server errors partition core/errors.py: a new code
    fails here until it is given a class (and the rules, docs and runbooks name it)."""
    assert {code.value for code in ErrorCode} == CALLER | UPSTREAM | SERVER
    assert len(CALLER) + len(UPSTREAM) + len(SERVER) == len(ErrorCode)
    found = alerts()
    for name, outcomes in OUTCOMES_READ.items():
        matchers = re.findall(r'outcome(=~|=)"([^"]*)"', found[name]["expr"])
        assert matchers, name
        assert all(set(values.split("|")) == outcomes for _, values in matchers), name
    for code in ErrorCode:
        assert f"`{code.value}`" in ALERTS_DOCS and f"`{code.value}`" in RUNBOOKS, code


def test_the_fleet_wide_alerts_are_not_split_by_host_family():
    found = alerts()
    for name in ("TomTomDown", "TomTomRateLimited", "ErrorBudgetBurnFast", "ErrorBudgetBurnSlow", "MetricsAbsent"):
        assert "host_family" not in found[name]["expr"], name


def test_the_alertmanager_config_groups_one_cause_into_one_page():
    config = yaml.safe_load(ALERTMANAGER.read_text())
    names = set(alerts())
    routes = [config["route"], *config["route"]["routes"]]
    assert [route for route in routes if "host_family" in route.get("group_by", [])] == []
    assert "cause" in config["route"]["group_by"]
    tomtom = next(route for route in routes if route.get("matchers") == ['cause="tomtom"'])
    assert tomtom["group_by"] == ["cause"] and tomtom["receiver"] == "page"
    receivers = {receiver["name"] for receiver in config["receivers"]}
    assert {route["receiver"] for route in routes} == receivers == {"page", "ticket"}

    inhibited: dict[str, set[str]] = {}
    for rule in config["inhibit_rules"]:
        (source,) = re.findall(r'alertname="(\w+)"', "".join(rule["source_matchers"]))
        (target,) = re.findall(r'alertname=~?"([^"]+)"', "".join(rule["target_matchers"]))
        assert source in names
        targets = set(target.split("|"))
        assert targets <= names, targets - names
        inhibited.setdefault(source, set()).update(targets)
    assert {"ToolCallErrorRateHigh", "ErrorBudgetBurnFast", "LatencyBudgetBurnFast"} <= inhibited["TomTomDown"]


@pytest.mark.skipif(AMTOOL is None, reason="needs amtool: make alert-deps (Debian's prometheus-alertmanager)")
def test_amtool_checks_the_alertmanager_config_and_routes_each_alert_by_severity():
    checked = subprocess.run([AMTOOL, "check-config", str(ALERTMANAGER)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    for name, rule in alerts().items():
        labels = [f"alertname={name}", *(f"{key}={value}" for key, value in rule["labels"].items())]
        if "host_family" in rule["expr"]:
            labels.append("host_family=Claude")
        routed = subprocess.run(
            [AMTOOL, "config", "routes", "test", f"--config.file={ALERTMANAGER}", *labels],
            capture_output=True,
            text=True,
        )
        assert routed.returncode == 0, routed.stderr
        assert routed.stdout.strip() == rule["labels"]["severity"], f"{name} goes to {routed.stdout.strip()}"
