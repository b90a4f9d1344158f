"""The Latency page's view: which runs it draws by default, their legend names, the operating
point for the runs drawn, panels nobody can fill, and tables as shown. Figures checked by hand."""
import json
import shutil

import pandas as pd
import pytest

from models import ViewState
from opx.publish.charts import LATENCY_PAD, hardware_color, latency_chart
from opx.store.importer import import_files
from opx.ingest.core import IngestOptions
from opx.answers.latency import (MAX_RUNS, dropped_runs_notes, kv_pool_table, latency,
                         operating_table, own_runs, runs_table)

HEADER = ("hardware,model,workload,framework,precision,gpus_total,tp,provenance,date,concurrency,"
          "interactivity_p50,throughput_total_per_gpu,ttft_p50_s,meta\n")
SIM = '"{""engine"": ""opx-sim""}"'

# b200, measured: run A (vllm fp8 TP8) and run B (sglang fp4 TP4). Their envelope, by hand:
# (50, 4000) A, (120, 1500) A, (160, 1200) B, (200, 500) A, (300, 400) B.
# A simulated b200 run beats both everywhere but is ignored: b200 has data.
# h200 has simulated runs only: S1 has 2 points on the envelope, S2 has 1.
ROWS = """\
b200,deepseek-r1,1k1k,vllm,fp8,8,8,measured,2026-01-10,4,200,500,0.2,
b200,deepseek-r1,1k1k,vllm,fp8,8,8,measured,2026-01-10,16,120,1500,0.4,
b200,deepseek-r1,1k1k,vllm,fp8,8,8,measured,2026-01-10,64,50,4000,1.1,
b200,deepseek-r1,1k1k,sglang,fp4,8,4,measured,2026-02-10,4,300,400,0.15,
b200,deepseek-r1,1k1k,sglang,fp4,8,4,measured,2026-02-10,16,160,1200,0.3,
b200,deepseek-r1,1k1k,opx-sim,fp4,8,8,simulated,2026-03-01,4,1000,9000,0.1,{sim}
h200,deepseek-r1,1k1k,opx-sim,fp8,8,8,simulated,2026-03-01,4,150,300,0.3,{sim}
h200,deepseek-r1,1k1k,opx-sim,fp8,8,8,simulated,2026-03-01,32,60,1800,0.9,{sim}
h200,deepseek-r1,1k1k,opx-sim,fp8,8,4,simulated,2026-03-01,8,100,900,0.5,{sim}
""".format(sim=SIM)


@pytest.fixture
def db(seed_db, tmp_path, catalog):
    path = tmp_path / "opx.duckdb"
    shutil.copy(seed_db, path)
    csv = tmp_path / "runs.csv"
    csv.write_text(HEADER + ROWS)
    results = import_files([csv], IngestOptions(), path, catalog)
    assert all(r.ok for r in results), results[0].error
    return path


def state(**kw) -> ViewState:
    return ViewState(model="deepseek-r1", workload="1k1k", hw=("b200", "h200"), pct="p50", **kw)


def shown(view) -> pd.DataFrame:
    return view.runs.set_index("run_id").loc[list(view.shown)]


def test_default_is_the_runs_behind_the_figure_at_the_target(db, catalog):
    # 150 lies between (120, A) and (160, B): the figure interpolates both, so both are drawn
    view = latency(db, state(target=150), catalog)
    runs = shown(view)
    b200 = runs[runs.hardware == "b200"]
    assert sorted(b200.framework) == ["sglang", "vllm"]
    assert set(b200.why) == {"the figure at the target interpolates its point"}
    answer = next(s.answer for s in view.answers if s.hardware == "b200")
    assert set(b200.index) == {c.run_id for c in answer.configs}
    # exactly on a point: its run
    runs = shown(latency(db, state(target=160), catalog))
    assert list(runs[runs.hardware == "b200"].framework) == ["sglang"]
    # below the range: the slowest envelope point meets it (A's at 50 tok/s/user)
    runs = shown(latency(db, state(target=10), catalog))
    b200 = runs[runs.hardware == "b200"]
    assert list(b200.framework) == ["vllm"] and "at-least figure" in b200.why.iloc[0]


def test_above_the_data_the_projection_and_without_a_figure_the_most_points(db, catalog):
    view = latency(db, state(target=1000), catalog)
    runs = shown(view)
    assert not view.picked
    # b200's data top out at 300; its simulated run reaches 1000: the projection answers
    b200 = runs[runs.hardware == "b200"].iloc[0]
    assert b200.provenance == "simulated" and "(projection)" in b200.why
    # h200 (simulated only) cannot reach 1000: its run with the most points, and why
    h200 = runs[runs.hardware == "h200"].iloc[0]
    assert h200.deployment.startswith("TP8") and h200.why.startswith("most points; ")
    assert "cannot reach 1000" in h200.why


def test_a_figure_whose_run_reports_no_latencies_stands_and_the_note_says_so(db, tmp_path,
                                                                            catalog):
    # a b200 figure without a concurrency is the fastest: the figure at 400 is its point, and
    # there is nothing to draw against concurrency
    csv = tmp_path / "no_concurrency.csv"
    csv.write_text(HEADER + "b200,deepseek-r1,1k1k,trtllm,fp4,8,8,published,2026-04-10,,400,"
                            "350,,\n")
    assert all(r.ok for r in import_files([csv], IngestOptions(), db, catalog))
    view = latency(db, state(target=400), catalog)
    answer = next(s.answer for s in view.answers if s.hardware == "b200")
    assert answer.how == "point" and answer.value == pytest.approx(350)
    note = next(n for n in view.notes if "reports no latencies" in n)
    assert note.startswith(catalog.hardware_name("b200")) and "(the figure stands)" in note
    assert "above" not in note and "below" not in note     # true in a file as on the page


def test_the_answers_table_is_the_explorers_figure(db, catalog):
    from opx.answers.explorer import explore
    from opx.answers.latency import answers_table
    for target in (10, 150, 160, 1000):
        view = latency(db, state(target=target), catalog)
        table = answers_table(view).set_index("Hardware")
        explorer = explore(db, state(target=target), catalog)
        for s in explorer.summaries:
            cell = table.loc[s.name, f"At {target:g} tok/s/user (tok/s/GPU)"]
            assert cell == s.answer.cell(__import__("opx.curves.metrics", fromlist=["y_metric"]).y_metric("total"))


def test_legend_names_are_the_hardware_and_what_differs(db, catalog):
    view = latency(db, state(target=160), catalog)
    assert list(view.points.drop_duplicates("run_id").run_name) == ["B200 (HGX)", "H200 SXM (HGX)"]
    every = tuple(view.runs.run_id)
    assert len(every) == 5
    view = latency(db, state(target=150, run=every), catalog)
    names = sorted(view.points.drop_duplicates("run_id").run_name)
    assert len(set(names)) == 5 and view.picked
    assert "B200 (HGX) · measured vllm fp8 TP8 8 GPUs 2026-01-10" in names
    assert "B200 (HGX) · simulated opx-sim fp4 TP8 8 GPUs 2026-03-01" in names
    assert "H200 SXM (HGX) · TP4 8 GPUs" in names
    # the picker's descriptions are distinct too, and name the hardware first
    assert view.runs.description.is_unique
    assert all(d.startswith(("B200", "H200")) for d in view.runs.description)


def test_picked_runs_and_the_operating_point_follow_the_runs_shown(db, catalog):
    view = latency(db, state(target=60, conc=16), catalog)
    assert len(view.operating) == 2                 # one per run shown, not one per run stored
    b200 = view.operating[view.operating.hardware == "B200 (HGX)"].iloc[0]
    assert b200.concurrency == 16 and b200.exact and b200.share_of_frontier == pytest.approx(1.0)
    a = view.runs[(view.runs.framework == "vllm")].run_id.iloc[0]
    view = latency(db, state(target=150, conc=20, run=(a, "0123456789abcdef")), catalog)
    assert view.shown == (a,) and list(view.operating.run) == ["B200 (HGX)"]
    assert view.operating.concurrency.iloc[0] == 16 and not view.operating.exact.iloc[0]
    asked = (a, "0123456789abcdef")
    assert any("1 run(s) in the link" in n for n in dropped_runs_notes(asked, view.runs, "p50"))
    assert own_runs(asked, view.runs) == (a,)
    table = operating_table(view.operating, "p50", 20)
    assert table["Concurrency"].iloc[0] == "16 (nearest to 20)"
    assert table["Interactivity P50 (tok/s/user)"].iloc[0] == "120"
    assert table["Throughput (tok/s/GPU, total)"].iloc[0] == "1.5k"
    assert table["TTFT P50 (s)"].iloc[0] == "0.4"
    assert table["TPOT P50 (ms)"].iloc[0] == "8.33"         # 1000 / 120 tok/s/user
    assert table["E2E P50 (s)"].iloc[0] == "–"              # not reported: a dash, not None


def test_tables_have_units_and_no_missing_cells(db, catalog):
    view = latency(db, state(target=160, conc=16), catalog)
    for table in (runs_table(view), operating_table(view.operating, "p50", 16)):
        assert not table.isna().any().any()
        assert not table.astype(str).isin(["None", "nan", "NaN", "<NA>", ""]).any().any()
    assert {"TTFT P50 (s)", "TPOT P50 (ms)", "E2E P50 (s)"} <= set(operating_table(
        view.operating, "p50", 16).columns)
    assert list(runs_table(view)["Run"]) == ["B200 (HGX)", "H200 SXM (HGX)"]


def test_kv_pool_table_is_labelled(seed_db, catalog):
    view = latency(seed_db, ViewState(pct="p50", conc=4800), catalog)
    table = kv_pool_table(view.kv_pool, "p50")
    assert sorted(table["TTFT P50 (s)"]) == ["29.8", "4.2"]
    assert not table.astype(str).isin(["None", "nan", ""]).any().any()


def test_the_chart_leaves_out_empty_panels_and_says_why(db, catalog):
    view = latency(db, state(target=160, conc=16), catalog)
    assert view.missing_panels() == [
        "No run shown reports end-to-end latency at P50: that panel is left out."]
    spec = latency_chart(view.points, "p50", 16, catalog).to_dict()
    panels = spec["vconcat"]
    assert len(panels) == 2                            # TTFT and TPOT; no E2E panel
    assert all(p["height"] >= 220 for p in panels)
    titles = [p["title"]["text"] for p in panels]
    assert titles == ["Time to first token (TTFT P50, s)", "Time per output token (TPOT P50, ms)"]
    assert spec["title"]["subtitle"] == view.missing_panels()
    text = json.dumps(spec)
    assert '"title": "TPOT P50 (ms)"' in text and '"title": "TTFT P50 (s)"' in text
    color = panels[0]["layer"][0]["encoding"]["color"]["scale"]
    assert color["domain"] == ["B200 (HGX)", "H200 SXM (HGX)"]
    assert color["range"] == [hardware_color(catalog, "b200"), hardware_color(catalog, "h200")]


def test_the_page_draws_the_export_s_panels_apart_aligned_with_one_legend(db, catalog):
    """The page draws each panel as its own chart at the browser's width (a stacked chart has a
    fixed width and was cut at 400 px): the same panels as the export, on one concurrency
    domain and one axis width so they line up, the legends under the last one only; the domain
    reaches a little past the first and last points, so none is cut by an axis."""
    import vl_convert as vlc

    from opx.publish.charts import latency_page_specs
    view = latency(db, state(target=160, conc=16), catalog)
    parts, specs = latency_page_specs(view.points, "p50", 16, catalog)
    export = latency_chart(view.points, "p50", 16, catalog).to_dict()
    assert parts.title == export["title"]["text"] and parts.missing == export["title"]["subtitle"]
    assert [s["title"]["text"] for s in specs] == [p["title"]["text"] for p in export["vconcat"]]
    assert all(s["autosize"]["type"] == "fit-x" for s in specs)      # the page's width
    domains = {json.dumps(layer["encoding"]["x"]["scale"]["domain"])
               for s in [*specs, *export["vconcat"]] for layer in s["layer"][:2]}
    assert domains == {json.dumps([view.points.concurrency.min() / LATENCY_PAD,
                                   view.points.concurrency.max() * LATENCY_PAD])}
    assert {layer["encoding"]["y"]["axis"]["minExtent"] for s in specs for layer in s["layer"][:2]} \
        == {40}

    def legends(spec):
        enc = [layer["encoding"] for layer in spec["layer"][:2]]
        return [e[k].get("legend", {}) is not None for e in enc for k in ("color", "shape")
                if k in e]
    assert [any(legends(s)) for s in specs] == [False] * (len(specs) - 1) + [True]
    for s in specs:
        assert vlc.vegalite_to_svg(s).lstrip().startswith("<svg")


def test_many_runs_draw_at_most_a_dozen(db, tmp_path, catalog):
    rows = "".join(f"b200,deepseek-r1,1k1k,vllm,fp8,8,{tp},measured,2026-01-{day:02d},{c},"
                   f"{400 / c},{c * 90},{0.1 * c},\n"
                   for tp in (1, 2, 4, 8) for day in range(1, 6) for c in (2, 8, 32))
    csv = tmp_path / "many.csv"
    csv.write_text(HEADER + rows)
    assert all(r.ok for r in import_files([csv], IngestOptions(), db, catalog))
    view = latency(db, state(), catalog)
    assert len(view.runs) == 25 and len(view.shown) == 2
    many = tuple(view.runs.run_id[view.runs.hardware == "b200"])
    view = latency(db, state(run=many), catalog)
    assert len(view.shown) == MAX_RUNS and view.points.run_id.nunique() == MAX_RUNS
    assert dropped_runs_notes(many, view.runs, "p50") == [
        f"{len(many)} runs picked: the first {MAX_RUNS} are drawn."]
    assert own_runs(many, view.runs) == many[:MAX_RUNS]
    names = view.points.drop_duplicates("run_id").run_name
    assert names.is_unique and all(len(n) < 60 for n in names)


def test_hardware_without_latencies_is_named(db, catalog):
    view = latency(db, state().model_copy(update={"hw": ("b200", "h200", "mi355x")}), catalog)
    assert any(n.startswith("AMD Instinct MI355X:") and "no run reports latencies" in n
               and "filters" not in n for n in view.notes), view.notes       # none is set
    assert set(view.runs.hardware) == {"b200", "h200"}


def test_a_kv_pool_comparison_at_another_statistic_is_pointed_to(seed_db, catalog):
    """The KV-cache pool result is reported at P50: at the default P90 the page says where it is."""
    at_p90 = latency(seed_db, ViewState(pct="p90", conc=4800), catalog)
    assert at_p90.kv_pool.empty
    assert "P50" in at_p90.kv_pool_hint and "KV-cache pool" in at_p90.kv_pool_hint
    assert latency(seed_db, ViewState(pct="p50", conc=4800), catalog).kv_pool_hint == ""


def test_an_empty_latency_view_says_why_and_the_fix(seed_db, catalog):
    """No latencies at the statistic: the note points to the statistics that have them; with
    none, to the filters when set, else to another system."""
    from models import pct_label
    from opx import store
    from opx.store import queries
    from opx.store.queries import filters_for
    state = ViewState(model="deepseek-r1", workload="1k1k", hw=("b200",), pct="p99")
    with store.reading(seed_db) as con:
        have = queries.latency_percentiles(con, filters_for(state))
    assert have and "p99" not in have
    note = latency(seed_db, state, catalog).notes[0]
    assert note.endswith(f"switch to {' or '.join(pct_label(p) for p in have)}, at which they do.")
    filtered = state.model_copy(update={"pct": have[0], "framework": ("no-such-framework",)})
    assert latency(seed_db, filtered, catalog).notes[0].endswith(
        "under these filters: clear a filter.")
    nothing = ViewState(model="qwen3-32b", workload="8k1k", hw=("vr-nvl72",), pct="mean")
    assert "choose other hardware" in latency(seed_db, nothing, catalog).notes[0]
