"""The seed case computed from DuckDB rows, and the marks cap."""
import pytest

from models import Deployment, Point, Run, ViewState
from opx import store
from opx.store import queries
from opx.answers.explorer import explore


def test_seed_case_figures(seed_db, catalog):
    view = explore(seed_db, ViewState(), catalog)
    by_hw = {s.hardware: s for s in view.summaries}
    vr, gb = by_hw["vr-nvl72"], by_hw["gb300-nvl72"]
    assert view.baseline == "gb300-nvl72"
    assert vr.at_target.value == pytest.approx(1.7e6)
    assert gb.at_target.value == pytest.approx(29_310)
    assert vr.multiple_at_target.value == pytest.approx(58.0, rel=1e-3)
    assert vr.multiple_at_peak.value == pytest.approx(2.7, rel=1e-3)
    assert vr.target_provenance == "preview" and gb.target_provenance == "derived"
    assert "interactivity not stated" in vr.peak_provenance
    assert "vLLM (Inferact)" in vr.target_source
    # peak figures have no interactivity: reference marks, never points
    assert sorted(view.references.y) == pytest.approx([933_333, 2_520_000])
    assert view.points.x.notna().all()


def test_target_outside_the_data_is_not_reachable(seed_db, catalog):
    view = explore(seed_db, ViewState(target=500), catalog)
    vr = next(s for s in view.summaries if s.hardware == "vr-nvl72")
    assert vr.at_target.text == "not reachable"
    assert vr.multiple_at_target.value is None
    assert "cannot reach 500" in vr.multiple_at_target.text
    table = view.table()
    assert table.iloc[0]["At 500 tok/s/user (tok/s/GPU)"].startswith(
        "Vera Rubin NVL72 cannot reach 500 tok/s/user")


def test_other_percentile_is_never_guessed(seed_db, catalog):
    view = explore(seed_db, ViewState(pct="p50"), catalog)
    assert view.points.empty
    assert any("no P50 interactivity" in n and "never guessed" in n for n in view.notes)
    # no P50 figure is guessed; the P90 figures that reach the target bound it from below
    assert all(s.answer.how == "stricter" and s.answer.configs[0].pct == "p90"
               for s in view.summaries)
    # the peaks still stand: they do not depend on a percentile
    assert view.summaries[0].peak == pytest.approx(2.52e6)


def test_provenance_filter(seed_db, catalog):
    view = explore(seed_db, ViewState(source=("preview",)), catalog)
    gb = next(s for s in view.summaries if s.hardware == "gb300-nvl72")
    assert gb.at_target.status == "no_data" and gb.peak is None


def test_marks_sent_to_the_browser_are_capped(tmp_path, catalog):
    db = tmp_path / "big.duckdb"
    runs = [Run(hardware="h200", model="deepseek-r1", workload="1k1k", provenance="measured",
                source=f"synthetic {i}", deployment=Deployment(gpus_total=8),
                points=tuple(Point(concurrency=c + 1, tpot_p50_s=0.005 * (c + 1) * (1 + i / 50),
                                   throughput_total_tok_s=800.0 * (c + 1) / (1 + i / 50))
                             for c in range(50)))
            for i in range(200)]
    with store.writing(db) as con:
        store.write_runs(con, runs)
    state = ViewState(model="deepseek-r1", workload="1k1k", hw=("h200",), pct="p50",
                      runs=True, points=True)
    with store.reading(db) as con:
        f = queries.Filters("deepseek-r1", "1k1k", ("h200",), "p50", "total")
        capped = queries.chart_points(con, f, other_points=True, max_other=500)
    assert len(capped) <= 500 + capped.on_envelope.sum()
    view = explore(db, state, catalog)
    assert len(view.points) <= 5000
    env = view.points[view.points.on_envelope]
    assert len(env) == 50   # the fastest run is the envelope everywhere


@pytest.mark.parametrize("target", [30, 120, 387, 1000])
@pytest.mark.parametrize("hw", [("vr-nvl72", "gb300-nvl72"), ("b200", "h200", "gb300-nvl72")])
def test_caveats_are_the_notes_of_the_points_behind_each_figure(full_db, catalog, hw, target):
    """The caveats beside the figures, read from the few noted rows, are those of every row
    behind each figure: the points its answer names (at the target) and the non-simulated rows
    at its peak, references first."""
    import numpy as np

    from opx.answers.explorer import _caveat
    view = explore(full_db, ViewState(hw=hw, target=target), catalog)
    want = []
    for s in view.summaries:
        at = []
        if s.answer.ok and s.answer.kind != "simulated" and not view.points.empty:
            keys = {(c.run_id, round(c.x, 6)) for c in s.answer.configs}
            at = [n for r, x, n in zip(view.points.run_id, view.points.x, view.points.point_note)
                  if (r, round(x, 6)) in keys and isinstance(n, str)]
        peak = [n for df in (view.references, view.points) if not df.empty
                for h, sim, y, n in zip(df.hardware, df.simulated, df.y, df.point_note)
                if s.peak_figure.value is not None and h == s.hardware and not sim
                and np.isclose(y, s.peak_figure.value) and isinstance(n, str)]
        for what, rows in (("at the target", at), ("peak", peak)):
            notes = [n for n in dict.fromkeys(_caveat(r) for r in rows) if n]
            if notes:
                want.append(f"{s.name}, {what}: {'; '.join(notes)}")
    assert want, "no figure here has a note behind it"
    assert view.caveats() == list(dict.fromkeys(want))
    assert view.tables_made().caveats() == view.caveats()
    # made once and kept in the copy a page's cache hands back at every rerun
    import pickle
    kept = pickle.loads(pickle.dumps(view))
    assert {"_caveats", "_provenance", "_table"} <= set(vars(kept))
    assert kept.table().equals(view.table())


def test_deployment_labels_made_once_per_deployment_are_each_row_s(full_db):
    """`deployment_labels` makes a label once per distinct deployment: for every point and
    reference figure the database holds, each row's is the label made from that row alone."""
    from opx.answers.run_labels import deployment_label, deployment_labels
    with store.reading(full_db) as con:
        rows = con.execute("SELECT * FROM runs").df()
    assert len(rows) > 100 and rows.tp.isna().any() and rows.disaggregated.astype(bool).any()
    assert deployment_labels(rows) == [deployment_label(r) for r in rows.itertuples()]
