"""The dashboards, linted offline (grafana/dashboard-linter's rules, re-implemented): every panel
has a datasource, a unit and a description; variables used are defined and defined ones used;
rates use $__rate_interval; every PromQL query parses (promtool) and every TraceQL query parses
(Grafana's own grammar, via node); failure rates exclude cancels."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from mcp_otel.semconv import STATUS_CODE_LABEL
from tests.stack.generated import generate
from tests.stack.stack import TRACEQL, dashboards, program, prometheus_targets, promtool, substitute

# The stack's assets do not depend on the SDK major: checked once, in the mcp 2.x run.
pytestmark = pytest.mark.mcp2

BUILTINS = {"__rate_interval", "__range", "__url_time_range", "__field", "__value", "__from", "__to"}
VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)")
DATASOURCE_VARIABLES = {"${datasource}": "prometheus", "${jaeger}": "jaeger", "${tempo}": "tempo"}
DASHBOARD_LIST = dashboards()


def _used_variables(thing: Any) -> set[str]:
    text = json.dumps(thing)
    return {a or b for a, b in VARIABLE.findall(text)} - BUILTINS


@pytest.fixture(params=DASHBOARD_LIST, ids=[d["uid"] for d in DASHBOARD_LIST])
def dashboard(request: pytest.FixtureRequest) -> dict[str, Any]:
    board: dict[str, Any] = request.param
    return board


def test_model(dashboard: dict[str, Any]) -> None:
    assert dashboard["schemaVersion"] == 41
    assert dashboard["id"] is None
    assert dashboard["editable"] is False
    assert len({panel["id"] for panel in dashboard["panels"]}) == len(dashboard["panels"])
    assert len({d["uid"] for d in DASHBOARD_LIST}) == len(DASHBOARD_LIST)


def test_every_panel_has_a_datasource_unit_and_description(dashboard: dict[str, Any]) -> None:
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    for panel in dashboard["panels"]:
        assert panel["description"].strip(), panel["title"]
        assert panel["fieldConfig"]["defaults"]["unit"], panel["title"]
        assert panel["targets"], panel["title"]
        for holder in [panel, *panel["targets"]]:
            datasource = holder["datasource"]
            plugin = DATASOURCE_VARIABLES[datasource["uid"]]
            assert datasource["type"] == plugin
            variable = variables[datasource["uid"][2:-1]]
            assert (variable["type"], variable["query"]) == ("datasource", plugin)


def test_variables_used_are_defined_and_defined_are_used(dashboard: dict[str, Any]) -> None:
    defined = [v["name"] for v in dashboard["templating"]["list"]]
    used = _used_variables(dashboard["panels"]) | _used_variables(dashboard["templating"]["list"])
    assert used <= set(defined), used - set(defined)
    assert set(defined) <= used, set(defined) - used
    assert len(defined) == len(set(defined))


def test_rates_use_rate_interval_and_counters_are_summed(dashboard: dict[str, Any]) -> None:
    for panel, target in prometheus_targets(dashboard):
        windows = set(re.findall(r"\[([^\]]+)\]", target["expr"]))
        # An instant table over the dashboard's range uses $__range; every graph $__rate_interval.
        assert windows == ({"$__range"} if target.get("instant") else {"$__rate_interval"}), panel["title"]
        calls = len(re.findall(r"\b(?:rate|increase)\(", target["expr"]))
        assert calls == len(re.findall(r"sum by \([^)]*\) \((?:rate|increase)\(", target["expr"])), panel["title"]
        # The span status's label, not rpc_response_status_code (the peer's JSON-RPC code).
        status = re.findall(rf"(?<!\w){STATUS_CODE_LABEL}(?!\w)", target["expr"])
        assert status == [], "failure rates come from tool_outcome, not status"


def test_failure_rates_exclude_cancels(dashboard: dict[str, Any]) -> None:
    ratios = [
        t["expr"]
        for panel, t in prometheus_targets(dashboard)
        if panel["fieldConfig"]["defaults"]["unit"] == "percentunit"
    ]
    assert len(ratios) == 6
    for expr in ratios:
        denominator = expr.rsplit("/\n", 1)[1]
        if 'tool_outcome="cancelled"' in expr:  # the cancel rates (a person's declines apart): among all calls
            assert 'tool_outcome=~"ok|failed|cancelled"' in denominator
        else:  # a failure rate, of tool calls or of every request
            assert 'tool_outcome=~"ok|failed"' in denominator or 'mcp_request_outcome=~"ok|failed"' in denominator
            assert "cancelled" not in expr


def test_every_promql_query_parses(dashboard: dict[str, Any], tmp_path: Path) -> None:
    """Each query, variables substituted for every source and side, as a recording rule that
    promtool parses (Prometheus 2.42's own parser)."""
    rules = [
        {
            "record": f"panel_{panel['id']}_{target['refId']}_{source}_{side}",
            "expr": substitute(target["expr"], source=pattern, side=side, window="5m"),
        }
        for panel, target in prometheus_targets(dashboard)
        for source, pattern in generate.SOURCE_PATTERNS.items()
        for side in ("client", "server")
    ]
    variables = [v["query"]["query"] for v in dashboard["templating"]["list"] if v["type"] == "query"]
    for index, query in enumerate(variables):  # label_values(selector, label): the selector must parse
        selector = re.fullmatch(r"label_values\((.*), \w+\)", query)
        assert selector, query
        rules.append(
            {
                "record": f"variable_{index}",
                "expr": f"count({substitute(selector.group(1), source='', side='', window='')})",
            }
        )
    path = tmp_path / "panels.rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "panels", "rules": rules}]}))
    checked = promtool("check", "rules", path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(rules)} rules found" in checked.stdout


def test_the_promql_check_can_fail(tmp_path: Path) -> None:
    path = tmp_path / "broken.rules.yml"
    path.write_text(
        yaml.safe_dump({"groups": [{"name": "x", "rules": [{"record": "x", "expr": "sum by (a (rate(x[5m]))"}]}]})
    )
    assert promtool("check", "rules", path).returncode == 1


def test_every_traceql_query_parses(dashboard: dict[str, Any]) -> None:
    queries = [t["query"] for p in dashboard["panels"] for t in p["targets"] if t.get("queryType") == "traceql"]
    assert queries
    substituted = [q.replace("${server:regex}", ".*") for q in queries]
    errors = _traceql_errors([*substituted, "{ span.tool.outcome = = }"])
    assert errors[:-1] == [0] * len(queries), queries
    assert errors[-1] > 0  # the check can fail


def _traceql_errors(queries: list[str]) -> list[int]:
    node = program("node")
    if not (TRACEQL / "node_modules").is_dir():
        program(TRACEQL / "node_modules" / "@grafana" / "lezer-traceql" / "package.json")
    parsed = subprocess.run(
        [node, "parse.mjs"], input=json.dumps(queries), capture_output=True, text=True, cwd=TRACEQL, timeout=60
    )
    assert parsed.returncode == 0, parsed.stderr
    errors: list[int] = json.loads(parsed.stdout)
    return errors


def test_jaeger_panels_search_failed_calls(dashboard: dict[str, Any]) -> None:
    targets = [t for p in dashboard["panels"] for t in p["targets"] if t["datasource"]["type"] == "jaeger"]
    assert [(t["queryType"], t["tags"]) for t in targets] == [("search", "tool.outcome=failed")]


def _lost(ours: Any, read: Any, path: str = "") -> list[str]:
    """Where ``read`` (the dashboard as the schema's models wrote it back) lacks or changes what
    ``ours`` sets; the defaults the models add are not differences. Null members are unset."""
    if isinstance(ours, dict) and isinstance(read, dict):
        return [
            lost
            for key, value in ours.items()
            if value is not None
            for lost in (_lost(value, read[key], f"{path}/{key}") if key in read else [f"{path}/{key}"])
        ]
    if isinstance(ours, list) and isinstance(read, list) and len(ours) == len(read):
        pairs = enumerate(zip(ours, read, strict=True))
        return [lost for index, (mine, theirs) in pairs for lost in _lost(mine, theirs, f"{path}[{index}]")]
    return [] if ours == read else [f"{path}: {ours!r} -> {read!r}"]


def test_the_dashboard_is_grafanas_own_schema(dashboard: dict[str, Any]) -> None:
    """Read with the models Grafana generates from its dashboard schema (grafana-foundation-sdk,
    Grafana 11.6) and written back, the dashboard keeps every field it sets, with its value: each
    exists in the schema with that type, every panel's options and field config in its plugin's
    schema. (Validated rather than built with the SDK's builders: generate.py derives every query
    from mcp_otel.semconv in plain data, which the tests read as JSON; builders would add a
    second vocabulary for the same document.)"""
    assert _lost(dashboard, _through_grafanas_schema(dashboard)) == []
    # The check can fail: what Grafana's schema does not know is lost on the way.
    variable = {**dashboard["templating"]["list"][-1], "definition": "not in the schema"}
    unknown = {**dashboard, "templating": {"list": [*dashboard["templating"]["list"][:-1], variable]}}
    last = len(unknown["templating"]["list"]) - 1
    assert _lost(unknown, _through_grafanas_schema(unknown)) == [f"/templating/list[{last}]/definition"]


def _through_grafanas_schema(dashboard: dict[str, Any]) -> Any:
    from grafana_foundation_sdk.cog.plugins import register_default_plugins
    from grafana_foundation_sdk.models.dashboard import Dashboard

    register_default_plugins()
    return json.loads(json.dumps(Dashboard.from_json(dashboard).to_json(), default=lambda part: part.to_json()))
