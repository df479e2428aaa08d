"""The Prometheus rules: committed output of the generator, valid, and right on synthetic series
(grafana/rules/tests, written by hand: cancels excluded, zero traffic gives no series, no failures
give 0, low traffic does not page, caller faults excluded by their JSON-RPC code on both sides and
by error.type on mcp-otel 0.1's points, a failure without either counted, fast and slow burns,
collector, Tempo and in-process metric names)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_otel.semconv import CALLER_FAULT_STATUS_CODES, ERROR_TYPE, RPC_RESPONSE_STATUS_CODE, prometheus_label
from tests.stack.generated import generate
from tests.stack.stack import PROMETHEUS_CONFIG, RULE_TESTS, RULES, load_yaml, promtool

# The stack's assets do not depend on the SDK major: checked once, in the mcp 2.x run.
pytestmark = pytest.mark.mcp2


def test_committed_rules_and_dashboards_are_what_the_generator_writes() -> None:
    stale = [path.name for path, text in generate.rendered().items() if path.read_text(encoding="utf-8") != text]
    assert stale == [], "run `python grafana/generate.py` and commit the result"


def test_promtool_checks_the_rules() -> None:
    checked = promtool("check", "rules", "--lint=duplicate-rules", "--lint-fatal", RULES)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 29 rules found" in checked.stdout


def test_promtool_unit_tests_pass() -> None:
    tested = promtool("test", "rules", RULE_TESTS.name, cwd=RULE_TESTS.parent)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout


CODES = "|".join(CALLER_FAULT_STATUS_CODES)
CODE, ERROR = prometheus_label(RPC_RESPONSE_STATUS_CODE), prometheus_label(ERROR_TYPE)
# Rules gone wrong, each a (text, replacement): the promtool tests must catch every one.
BROKEN = {
    "cancelled calls valid": ('tool_outcome=~"ok|failed"', 'tool_outcome=~"ok|failed|cancelled"'),
    "cancelled requests valid": ('mcp_request_outcome=~"ok|failed"', 'mcp_request_outcome=~"ok|failed|cancelled"'),
    # A server's caller fault has its code and no error.type; mcp-otel 0.1's points the reverse.
    "caller faults by error.type alone": (f'{CODE}!~"{CODES}", ', ""),
    "caller faults by the code alone": (f', {ERROR}!~"{CODES}"', ""),
    "a failure without error.type not a fault": (f'{ERROR}!~"{CODES}"', f'{ERROR}=~".+", {ERROR}!~"{CODES}"'),
    "calls' record drops the code": (
        f"{ERROR}, {CODE}, mcp_request_cancel_reason)",
        f"{ERROR}, mcp_request_cancel_reason)",
    ),
    "requests' record drops the code": (f"mcp_request_outcome, {ERROR}, {CODE})", f"mcp_request_outcome, {ERROR})"),
}


@pytest.mark.parametrize(("text", "replacement"), BROKEN.values(), ids=BROKEN)
def test_the_unit_tests_fail_on_broken_rules(tmp_path: Path, text: str, replacement: str) -> None:
    """The promtool tests can fail: each way the rules could miscount is caught."""
    broken = RULES.read_text().replace(text, replacement)
    assert broken != RULES.read_text()
    (tmp_path / "tests").mkdir()
    (tmp_path / RULES.name).write_text(broken)
    (tmp_path / "tests" / RULE_TESTS.name).write_text(RULE_TESTS.read_text())
    tested = promtool("test", "rules", RULE_TESTS.name, cwd=tmp_path / "tests")
    assert tested.returncode == 1, tested.stdout + tested.stderr
    assert "FAILED" in tested.stdout + tested.stderr


def test_every_alert_has_a_severity_and_a_low_traffic_guard() -> None:
    alerts = [rule for group in load_yaml(RULES)["groups"] for rule in group["rules"] if "alert" in rule]
    assert {alert["labels"]["severity"] for alert in alerts} == {"page", "ticket"}
    for alert in alerts:
        assert f">= {generate.MIN_VALID_CALLS}" in alert["expr"]


def test_the_shipped_prometheus_configuration_loads_the_rules() -> None:
    checked = promtool("check", "config", PROMETHEUS_CONFIG)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert [(PROMETHEUS_CONFIG.parent / path).resolve() for path in load_yaml(PROMETHEUS_CONFIG)["rule_files"]] == [
        RULES
    ]
