"""MCP for agents, on the official SDK (`mcp`): each tool asks a page's question through the
function behind `opx export` and `GET /api/v1/<page>` (`opx.publish.document.document`, read
strictly), so an agent, a program and a page read the same number. No tool writes.

Served two ways: streamable HTTP at /mcp beside the pages (`http_route`, stateless, so any
replica answers any request), and stdio (`python -m opx mcp`)."""
from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from opx import __version__
from opx.errors import OpxError

Filters = dict[str, str | list[str]] | None
FILTERS_HELP = ("more of the page's own URL parameters (docs/url-params.md), e.g. "
                "{\"framework\": [\"vllm\"], \"gpus\": [\"8\"], \"source\": [\"measured\"]}")


def _ask(page: str, params: dict[str, Any], more: Filters = None, fmt: str = "json") -> dict:
    """A page's JSON document for these URL parameters; a value the page cannot honour is a
    tool error naming it."""
    from opx.api.endpoints import PAGE_PATHS, catalog, database
    from opx.publish.document import document
    pairs: list[tuple[str, str]] = []
    for name, value in {**params, **(more or {})}.items():
        for v in (value if isinstance(value, (list, tuple)) else [value]):
            if v is not None:
                pairs.append((name, str(v)))
    try:
        doc = document(f"{PAGE_PATHS[page]}?{urlencode(pairs)}", fmt, database(), catalog(),
                       strict=True)
    except OpxError as exc:
        raise ToolError(str(exc)) from None
    return json.loads(doc.data)


def build() -> MCPServer:
    server = MCPServer("opx", version=__version__, instructions=(
        "opx answers LLM-serving questions from measured, published and simulated runs: "
        "throughput per GPU at an interactivity target (tok/s/user at a statistic such as "
        "p90), multiples between hardware, fleet plans. Every figure says how it was obtained "
        "and where it comes from; quote that with it, and the link."))

    @server.tool(description="One hardware's figure at an interactivity target, as the "
                             "Explorer resolves it: the figure, how it was obtained (data, "
                             "'at least', interpolated between two named points, a projection), "
                             "its provenance, the configuration behind it, and the link.")
    def figure_at_target(hardware: str, model: str, workload: str, statistic: str = "p90",
                         target: float = 387.0, metric: str = "total",
                         filters: Filters = None) -> dict:
        doc = _ask("explorer", {"hw": [hardware], "model": model, "workload": workload,
                                "pct": statistic, "target": target, "y": metric}, filters)
        mine = next((h for h in doc["hardware"] if h["hardware"] == hardware),
                    doc["hardware"][0] if doc["hardware"] else None)
        if mine is None:
            raise ToolError(f"no figure for `{hardware}`")
        keep = ("hardware", "name", "at_target", "at_target_status", "at_target_how",
                "at_target_how_text", "at_target_kind", "at_target_bound", "reachable",
                "target_provenance", "target_source", "target_note", "configurations", "peak",
                "peak_provenance")
        return {"link": doc["link"], "model": doc["model"], "workload": doc["workload"],
                "statistic": doc["percentile"], "target_tok_s_user": doc["target_tok_s_user"],
                "metric": doc["metric"], "notes": doc["notes"],
                **{k: mine.get(k) for k in keep}}

    @server.tool(description="Compare: A's and B's figures at the target and at peak, and the "
                             "multiples (null with a reason when B cannot reach the target). "
                             "The /compare page's JSON.")
    def compare(a: str, b: str, model: str, workload: str, statistic: str = "p90",
                target: float = 387.0, metric: str = "total", filters: Filters = None) -> dict:
        return _ask("compare", {"a": a, "b": b, "hw": [a, b], "model": model,
                                "workload": workload, "pct": statistic, "target": target,
                                "y": metric}, filters)

    @server.tool(description="Fleet plan: per hardware, the GPUs, racks, power and cost to "
                             "serve a demand at an interactivity target. The /planner page's JSON.")
    def plan(model: str, workload: str, hardware: list[str] | None = None,
             statistic: str = "p90", target: float = 387.0, sessions: float | None = None,
             output_tok_s: float | None = None, max_ttft_s: float | None = None,
             filters: Filters = None) -> dict:
        return _ask("planner", {"model": model, "workload": workload, "hw": hardware,
                                "pct": statistic, "target": target, "sessions": sessions,
                                "tps": output_tok_s, "ttft": max_ttft_s}, filters)

    @server.tool(description="Latency: TTFT and TPOT of the runs behind each hardware's figure, "
                             "and their operating points. The /latency page's JSON.")
    def latency(model: str, workload: str, hardware: list[str] | None = None,
                statistic: str = "p90", target: float = 387.0, filters: Filters = None) -> dict:
        return _ask("latency", {"model": model, "workload": workload, "hw": hardware,
                                "pct": statistic, "target": target}, filters)

    @server.tool(description="Simulate a system opx has no data for (or more of one it has): "
                             "the projection at the target and its envelope. The /simulate "
                             "page's JSON; nothing is stored.")
    def simulate(hardware: str, model: str, workload: str, gpus: int = 0,
                 statistic: str = "p50", target: float = 387.0,
                 filters: Filters = None) -> dict:
        return _ask("simulate", {"hw": hardware, "model": model, "workload": workload,
                                 "gpus": gpus, "pct": statistic, "target": target}, filters)

    @server.tool(description="The stored runs under `runs list`'s filters (hardware, model, "
                             "workload, provenance, framework, precision, gpus, mode, mtp, "
                             "since, until), newest import first, a page at a time.")
    def list_runs(filters: Filters = None, limit: int = 50, after: str | None = None) -> dict:
        return _runs(filters or {}, limit, after)

    @server.tool(description="What the database holds: per model, workload, hardware and "
                             "provenance, runs and points, and which statistics they state.")
    def coverage() -> dict:
        from opx.api.endpoints import coverage_document
        return coverage_document()

    for kind in ("hardware", "models", "workloads"):
        _catalog_resource(server, kind)
    return server


def _runs(filters: dict, limit: int, after: str | None) -> dict:
    from opx.api.endpoints import page_size, runs_page
    from opx.publish.runs_output import json_value
    from opx.store.queries import RUN_LIST_FIELDS
    given = {k: [str(x) for x in (v if isinstance(v, list) else [v])] for k, v in filters.items()}
    try:
        page, next_after = runs_page(given, page_size(str(limit)), after)
    except OpxError as exc:
        raise ToolError(str(exc)) from None
    return {"runs": [{n: json_value(n, v) for n, v in zip(RUN_LIST_FIELDS, row)} for row in page],
            "limit": limit, "next_after": next_after}


def _catalog_resource(server: MCPServer, kind: str) -> None:
    @server.resource(f"opx://catalog/{kind}", name=f"catalog-{kind}", mime_type="application/json",
                     description=f"The catalog's {kind}: slugs, names and sources")
    def read() -> str:
        from opx.api.endpoints import catalog
        return json.dumps(catalog().model_dump(mode="json")[kind], default=str)


def http_route():
    """/mcp as a route of the dashboard's server, and the context that runs its sessions."""
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.routing import Route
    app = build().streamable_http_app(
        streamable_http_path="/mcp", stateless_http=True, json_response=True,
        # The pages answer any Host (a proxy's name included); so does /mcp, which only reads.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    route = next(r for r in app.routes if getattr(r, "path", "") == "/mcp")
    manager = route.endpoint.session_manager
    return Route("/mcp", route.endpoint), manager.run


def run_stdio() -> None:
    build().run("stdio")
