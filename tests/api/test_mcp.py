"""The MCP server with the SDK's own client, over both transports: streamable HTTP at /mcp of a
served opx, and stdio (`python -m opx mcp`). Its tools give the pages' answers (the same numbers
as the API), its catalog is readable as resources, and nothing it offers writes."""
from __future__ import annotations

import json
import sys

import anyio
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

from opx import store
from tests.api.conftest import call
from tests.conftest import ROOT

TOOLS = {"figure_at_target", "compare", "plan", "latency", "list_runs", "simulate", "coverage"}
SEED = {"model": "deepseek-v4.1-flash", "workload": "agentx", "statistic": "p90", "target": 387}


def _text(result) -> dict:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


async def _session(server, api, api_db):
    before = store.data_stamp(api_db)
    async with Client(server) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names == TOOLS

        fig = _text(await client.call_tool("figure_at_target", {"hardware": "gb300-nvl72", **SEED}))
        explorer = call(f"{api}/api/v1/explorer?hw=gb300-nvl72&model={SEED['model']}"
                        f"&workload=agentx&pct=p90&target=387&y=total").json()
        mine = explorer["hardware"][0]
        assert fig["at_target"] == mine["at_target"] and fig["at_target_how"] == mine["at_target_how"]
        assert fig["configurations"] == mine["configurations"]
        assert fig["target_provenance"] == mine["target_provenance"] and "/?" in fig["link"]

        cmp = _text(await client.call_tool("compare", {"a": "vr-nvl72", "b": "gb300-nvl72", **SEED}))
        api_cmp = call(f"{api}/api/v1/compare?a=vr-nvl72&b=gb300-nvl72&hw=vr-nvl72&hw=gb300-nvl72"
                       f"&model={SEED['model']}&workload=agentx&pct=p90&target=387&y=total").json()
        for key in ("multiple_at_target", "multiple_at_peak"):
            assert cmp[key] == api_cmp[key]
        assert round(cmp["multiple_at_target"]) == 58

        seed = {k: v for k, v in SEED.items()}
        plan = _text(await client.call_tool("plan", {**seed, "sessions": 1000}))
        assert plan["page"] == "planner" and plan["ranking"]
        lat = _text(await client.call_tool("latency", seed))
        assert lat["page"] == "latency"
        sim = _text(await client.call_tool("simulate", {"hardware": "b200", "model": "deepseek-r1",
                                                        "workload": "1k1k", "gpus": 8}))
        assert sim["page"] == "simulate" and sim["envelope"]
        runs = _text(await client.call_tool("list_runs", {"filters": {"hardware": ["b200"]},
                                                          "limit": 5}))
        assert len(runs["runs"]) == 5 and {r["hardware"] for r in runs["runs"]} == {"b200"}
        more = _text(await client.call_tool("list_runs", {"filters": {"hardware": "b200"},
                                                          "limit": 5,
                                                          "after": runs["next_after"]}))
        assert not {r["id"] for r in more["runs"]} & {r["id"] for r in runs["runs"]}
        cov = _text(await client.call_tool("coverage", {}))
        assert any(r["hardware"] == "vr-nvl72" for r in cov["coverage"])

        bad = await client.call_tool("compare", {"a": "vr-nvl72", "b": "nope", **SEED})
        assert bad.is_error and "b" in bad.content[0].text and "nope" in bad.content[0].text
        bad = await client.call_tool("list_runs", {"filters": {"colour": "red"}})
        assert bad.is_error and "colour" in bad.content[0].text

        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        assert uris == {"opx://catalog/hardware", "opx://catalog/models", "opx://catalog/workloads"}
        hw = json.loads((await client.read_resource("opx://catalog/hardware")).contents[0].text)
        assert "vr-nvl72" in hw and "gb300-nvl72" in hw
    assert store.data_stamp(api_db) == before          # no tool wrote


def test_mcp_over_streamable_http_at_slash_mcp(api, api_db):
    anyio.run(_session, f"{api}/mcp", api, api_db)


def test_mcp_over_stdio(api, api_db):
    params = StdioServerParameters(command=sys.executable, args=["-m", "opx", "mcp", "--db",
                                                                 str(api_db)], cwd=str(ROOT))
    anyio.run(_session, params, api, api_db)


def test_mcp_with_a_database_that_cannot_be_opened_says_so(tmp_path):
    import subprocess
    r = subprocess.run([sys.executable, "-m", "opx", "mcp", "--db", str(tmp_path / "none.duckdb")],
                       capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 1 and "no such file" in r.stderr and "Traceback" not in r.stderr
