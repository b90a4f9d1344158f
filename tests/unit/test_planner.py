"""The Planner's sizing with the resolver's figure, its agreement with the Explorer, the TTFT
limit, and how its table and chart read."""
import json
import math
import shutil

import pytest

from models import ViewState
from opx.publish.charts import hardware_color, planner_chart
from opx.answers.explorer import explore
from opx.store.importer import import_files
from opx.ingest.core import IngestOptions
from opx.answers.planner import deployed, explorer_state, money, output_share, plan
from opx.publish.link_view import planner_context

AGENTX_SHARE = 345 / (85_000 + 345)


def test_seed_plan_sizes_with_the_published_points(full_db, catalog):
    """10,000 sessions at 387 tok/s/user P90: Rubin's 1.7M tok/s/GPU point and GB300's 29.3k, the
    figures the Explorer shows there, in whole racks of 72."""
    result = plan(full_db, ViewState(sessions=10_000), catalog)
    assert result.excluded == []
    rows = result.rows.set_index("hardware_slug")
    rubin, gb300 = rows.loc["vr-nvl72"], rows.loc["gb300-nvl72"]
    assert result.output_share == pytest.approx(AGENTX_SHARE)
    # sessions x 387 tok/s each, over output tok/s per GPU = 1.7M x 345/85,345, whole racks of 72
    assert rubin.total_per_gpu == pytest.approx(1.7e6)
    assert rubin.output_per_gpu == pytest.approx(1.7e6 * AGENTX_SHARE)
    assert rubin.gpus == math.ceil(10_000 * 387 / (1.7e6 * AGENTX_SHARE * 72)) * 72 == 576
    assert rubin.racks == 8 and rubin.kind == "data" and "the point" in rubin.how
    assert gb300.gpus == math.ceil(10_000 * 387 / (29_310 * AGENTX_SHARE * 72)) * 72 == 32_688
    assert gb300.racks == 454 and gb300.provenance == "derived"
    assert rubin.usd_per_hour == pytest.approx(576 * 3.71)
    assert rubin.mw == pytest.approx(576 * 3200 / 1e6)
    assert list(result.rows.hardware_slug) == ["vr-nvl72", "gb300-nvl72"]   # cheapest first


def test_above_the_data_the_projection_sizes_and_says_so(full_db, catalog):
    """At 500 tok/s/user P90 no data point of either system reaches the target; Rubin's
    projection does (the Explorer's figure there), GB300's tops out below it: excluded, why."""
    state = ViewState(sessions=10_000, target=500)
    result = plan(full_db, state, catalog)
    rubin = result.rows.set_index("hardware_slug").loc["vr-nvl72"]
    view = {s.hardware: s.answer for s in explore(full_db, explorer_state(state),
                                                   catalog).summaries}
    assert rubin.kind == "projection" and rubin.total_per_gpu == view["vr-nvl72"].value
    why = dict(result.excluded)["GB300 NVL72"]
    assert "cannot reach 500 tok/s/user" in why and "lower the target" in why


def test_a_token_demand_and_no_demand(full_db, catalog):
    tokens = plan(full_db, ViewState(tps=1e6), catalog).rows.set_index("hardware_slug")
    assert tokens.loc["vr-nvl72", "gpus"] == math.ceil(1e6 / (1.7e6 * AGENTX_SHARE * 72)) * 72
    none = plan(full_db, ViewState(), catalog)
    assert none.rows.gpus.isna().all() and none.notes
    # ranked by $/M tokens: $/GPU-hour / (total tok/s/GPU x 3600 / 1e6)
    assert none.rows.usd_per_mtok.iloc[0] == pytest.approx(3.71 / (1.7e6 * 3600 / 1e6))


def test_a_stricter_percentiles_figure_meets_the_sla(full_db, catalog):
    """At P50 the seed's P90 figures are at-least figures (P50 interactivity >= P90), on the
    Explorer and in the plan alike."""
    result = plan(full_db, ViewState(sessions=10_000, pct="p50"), catalog)
    rubin = result.rows.set_index("hardware_slug").loc["vr-nvl72"]
    assert rubin.gpus == 576 and rubin.bound and "stricter statistic" in rubin.how
    table = result.table().set_index("Hardware")
    assert table.loc["Vera Rubin NVL72", "At target (tok/s/GPU)"] == "≥ 1.7M"
    view = explore(full_db, ViewState(pct="p50"), catalog)
    assert view.summaries[0].answer.cell(__import__("opx.curves.metrics", fromlist=["y_metric"]).y_metric("total")) \
        == "≥ 1.7M"


def test_a_ttft_limit_is_checked_on_the_configuration_deployed(full_db, catalog):
    base = ViewState(model="deepseek-r1", workload="1k1k", hw=("h200", "b200"),
                     pct="mean", target=40, sessions=10_000)
    view = {s.hardware: s.answer for s in explore(full_db, explorer_state(base),
                                                   catalog).summaries}
    ttft = {hw: deployed(a).ttft_s for hw, a in view.items() if a.ok}
    assert all(v is not None for v in ttft.values()), ttft
    limit = sorted(ttft.values())[0] * 1.01          # the faster one passes, the other does not
    result = plan(full_db, base.model_copy(update={"ttft": limit}), catalog)
    kept = set(result.rows.hardware_slug)
    assert kept == {hw for hw, v in ttft.items() if v <= limit}
    for name, why in result.excluded:
        assert "above the" in why and "TTFT" in why


VIEWS = [
    ViewState(sessions=10_000),                                                  # the seed view
    ViewState(sessions=10_000, pct="p50", target=100),
    ViewState(model="deepseek-r1", workload="1k1k", hw=("gb200-nvl72", "gb300-nvl72"),
              pct="p50", target=40, sessions=10_000),
    ViewState(model="deepseek-r1", workload="1k1k", hw=("gb200-nvl72", "gb300-nvl72"),
              pct="p50", target=30, tps=5e6),
    ViewState(model="deepseek-r1", workload="8k1k", hw=("gb200-nvl72", "gb300-nvl72"),
              pct="p50", target=29.8, sessions=50_000),
    ViewState(model="deepseek-v4.1-flash", workload="1k1k",
              hw=("vr-nvl72", "gb300-nvl72", "gb200-nvl72", "b200", "h200"), pct="p50",
              target=100, sessions=10_000),
    ViewState(model="deepseek-v4.1-flash", workload="8k1k",
              hw=("vr-nvl72", "gb300-nvl72", "b200"), pct="p90", target=50, tps=1e6),
]


@pytest.mark.parametrize("state", VIEWS,
                         ids=lambda s: f"{s.model}-{s.workload}-{s.pct}-{s.target:g}")
def test_the_plan_sizes_with_exactly_the_explorers_figure(full_db, catalog, state):
    """Per hardware, the total tok/s per GPU the plan uses is the Explorer's figure at the same
    target, a hardware without one is excluded with its reason, and the GPUs follow from it."""
    result = plan(full_db, state, catalog)
    assert not result.rows.empty
    answers = {s.hardware: s.answer for s in explore(full_db, explorer_state(state),
                                                      catalog).summaries}
    share = output_share(catalog, state.workload)
    for row in result.rows.itertuples():
        a = answers[row.hardware_slug]
        assert row.total_per_gpu == a.value == a.tput
        assert row.output_per_gpu == pytest.approx(a.value * share, rel=1e-12)
        g = deployed(a).gpus_total
        assert row.gpus_per_deployment == g
        demand = state.sessions * a.x if state.sessions else state.tps
        assert row.gpus == math.ceil(demand / (row.output_per_gpu * g)) * g
    planned = set(result.rows.hardware_slug)
    assert planned == {hw for hw, a in answers.items() if a.ok}
    for name, why in result.excluded:
        assert why.startswith(next(a.reason for a in answers.values() if a.name == name))


def test_the_table_reads_like_a_table(full_db, catalog):
    for state in (ViewState(sessions=10_000), ViewState(sessions=10_000, target=500),
                  ViewState(), VIEWS[5]):
        table = plan(full_db, state, catalog).table()
        cols = list(table.columns)
        assert cols[:7] == ["Rank", "Hardware", "GPUs", "Racks", "MW", "$/hour", "$/M tokens"]
        assert {"At target (tok/s/GPU)", "Concurrency", "How it was obtained",
                "Interactivity (tok/s/user)", "Configuration deployed"} <= set(cols)
        cells = [str(v) for v in table.drop(columns="Rank").to_numpy().ravel()]
        assert all(isinstance(v, str) for v in table.drop(columns="Rank").to_numpy().ravel())
        assert not any(c in ("None", "nan", "NaN", "") for c in cells)
        money_cells = list(table["$/hour"]) + list(table["$/M tokens"])
        assert all(c == "–" or c.startswith("$") for c in money_cells)
        assert not any("e-" in c or "e+" in c for c in money_cells)
    seed = plan(full_db, ViewState(sessions=10_000), catalog).table().set_index("Hardware")
    assert seed.loc["GB300 NVL72", "GPUs"] == "32,688"
    assert seed.loc["Vera Rubin NVL72", "$/hour"] == "$2,137"
    assert seed.loc["Vera Rubin NVL72", "At target (tok/s/GPU)"] == "1.7M"
    assert seed.loc["Vera Rubin NVL72", "Concurrency"] == "not stated"


def test_money_is_written_for_people():
    assert [money(v) for v in (296_800, 2136.96, 3.71, 0.025, 0.000606, None)] == \
        ["$296,800", "$2,137", "$3.71", "$0.025", "$0.000606", "–"]


def test_the_chart_is_tall_enough_coloured_by_hardware_and_says_dollars(full_db, catalog):
    result = plan(full_db, VIEWS[5], catalog)
    title, sub = planner_context(result, catalog, "")
    spec = planner_chart(result.rows, title, sub, catalog).to_dict()
    assert spec["height"] >= max(200, 60 * len(result.rows))
    assert spec["autosize"]["type"] == "fit-x"          # the title never eats the plot's height
    bars, text = spec["layer"]
    scale = bars["encoding"]["color"]["scale"]
    assert scale["range"] == [hardware_color(catalog, h) for h in result.rows.hardware_slug]
    assert spec["encoding"]["x"]["axis"]["format"].startswith("$") if "encoding" in spec else \
        bars["encoding"]["x"]["axis"]["format"].startswith("$")
    labels = [d["text"] for d in next(iter(spec["datasets"].values()))]
    assert all(label.startswith("$") and "GPUs" in label for label in labels)
    no_demand = plan(full_db, ViewState(), catalog)
    title, sub = planner_context(no_demand, catalog, "")
    spec = planner_chart(no_demand.rows, title, sub, catalog).to_dict()
    x = (spec.get("encoding") or spec["layer"][0]["encoding"])["x"]
    assert x["title"] == "Cost ($/M tokens)" and x["axis"]["format"].startswith("$,.")
    assert "~s" not in json.dumps(spec)
    # a long link is wrapped at ? and &, never widening or clipping the image
    link = "http://localhost:8501/planner?" + "&".join(f"hw=system-{i}" for i in range(30))
    _, sub = planner_context(no_demand, catalog, link)
    assert all(len(line) <= 128 for line in sub) and "".join(sub[1:]).endswith("hw=system-29")


def test_exports_agree_with_the_page(full_db, catalog):
    from opx.links import parse_link
    from opx.publish.render import render_link
    link = parse_link("/planner?sessions=10000", catalog)
    summary = json.loads(render_link(link, "json", full_db, catalog))
    page = plan(full_db, link.state, catalog)
    assert [r["gpus"] for r in summary["ranking"]] == list(page.rows.gpus) == [576, 32_688]
    assert summary["output_share"] == pytest.approx(AGENTX_SHARE)
    assert "sized with its figure at the target" in summary["sizing"]
    csv = render_link(link, "csv", full_db, catalog).decode()
    assert csv.splitlines()[0].startswith("Rank,Hardware,GPUs,Racks,MW,$/hour")
    assert render_link(link, "png", full_db, catalog)[:4] == b"\x89PNG"
