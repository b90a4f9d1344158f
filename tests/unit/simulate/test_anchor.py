"""Anchored projections (opx/simulate/anchor.py, opx/answers/anchoring.py): which figures anchor, the fit
honours them, and the seed's figures on the default view."""
import json

import numpy as np
import pandas as pd
import pytest

from models import ViewState
from opx import cli
from opx.answers.explorer import explore
from opx.simulate import anchor as A
from opx.simulate.api import SimKnobs


def _pts(*rows):
    return pd.DataFrame(list(rows))


def test_each_kind_of_figure_becomes_an_anchor():
    got = A.anchors_from_points(_pts(
        dict(run_id="a", provenance="preview", interactivity_p90=387, throughput_total_per_gpu=1.7e6),
        dict(run_id="a", provenance="preview", throughput_total_per_gpu=2.52e6),
        dict(run_id="b", provenance="preview", interactivity_p90=1810, interactivity_p50=1844,
             concurrency=1),
        dict(run_id="c", provenance="preview", interactivity_p50=1117, concurrency=1),
        dict(run_id="d", provenance="preview", concurrency=4800),
    ), prefer="p90")
    kinds = [(a.run_id, a.kind, a.pct, a.fitted) for a in got]
    assert kinds == [("a", "point", "p90", True), ("a", "peak", None, True),
                     ("b", "single", "p90", True), ("c", "single", "p50", False)]
    assert got[3].reason == "a slower single session than the fastest one"
    assert got[0].sigma == A.SIGMA["preview"]


def test_points_below_the_datas_own_frontier_are_not_fitted():
    got = A.anchors_from_points(_pts(
        dict(run_id="m", provenance="measured", interactivity_p50=20, throughput_total_per_gpu=1000),
        dict(run_id="m", provenance="measured", interactivity_p50=10, throughput_total_per_gpu=900),
        dict(run_id="m", provenance="measured", interactivity_p50=5, throughput_total_per_gpu=2000)))
    assert [a.fitted for a in got] == [True, False, True]
    assert got[1].reason == "below the data's own frontier"


def test_log_log_interpolation_never_extrapolates():
    xs, ys = np.array([10.0, 100.0]), np.array([1000.0, 10.0])
    assert A.loglog_at(xs, ys, 10 ** 1.5) == pytest.approx(100.0)
    assert A.loglog_at(xs, ys, 200.0) is None and A.loglog_at(xs, ys, 5.0) is None


@pytest.fixture(scope="module")
def gb300_fit(catalog):
    anchors = A.anchors_from_points(_pts(
        dict(run_id="g", label="GB300", provenance="derived", interactivity_p90=387,
             throughput_total_per_gpu=29310),
        dict(run_id="g", label="GB300", provenance="derived", throughput_total_per_gpu=933333)),
        prefer="p90")
    return A.fit("gb300-nvl72", "deepseek-v4.1-flash", "agentx", None, SimKnobs(mtp_depth=1),
                 catalog, anchors)


def test_a_fit_honours_its_anchors_and_reports_them(gb300_fit):
    s = gb300_fit.summary()
    assert s["anchored"] and set(s["parameters"]) == set(A.FREE)
    for name, p in s["parameters"].items():
        low, high = A.FREE[name][1:3]
        assert low <= p["multiplier"] <= high and p["sd_log"] is not None
    assert [r["within"] for r in s["anchors"]] == [True, True]
    assert all(abs(r["residual_pct"]) < 20 for r in s["anchors"])
    # the band brackets the curve on every envelope point
    env = gb300_fit.result.envelope_p90
    assert (env.band_lo <= env.throughput_total_per_gpu * (1 + 1e-9)).all()
    assert (env.band_hi >= env.throughput_total_per_gpu * (1 - 1e-9)).all()
    assert (env.band_hi > env.band_lo).any()
    # saved runs name their anchors
    runs = gb300_fit.result.to_runs(envelope_only=True)
    assert runs and all(r.meta["anchors"] == "g" and "(anchored)" in r.label for r in runs)
    assert json.loads(runs[0].meta["anchor"])["anchors"][0]["run_id"] == "g"


def test_without_anchors_the_projection_is_the_unanchored_one(catalog):
    f = A.fit("gb300-nvl72", "deepseek-v4.1-flash", "1k1k", None, SimKnobs(), catalog, [])
    assert not f.anchored and f.scale == {}
    assert "unanchored" in f.summary()["band"]


def test_the_seed_figures_on_the_default_view(full_db, catalog):
    """Rubin vs GB300, DeepSeek-V4.1-Flash, AgentX, P90, 387 tok/s/user: the anchored simulated
    curves pass within 30 % of the post's 1.7 M and 29.3 k, and Rubin's reaches a single session
    near 1,810 tok/s/user."""
    view = explore(full_db, ViewState(), catalog)
    by_hw = {s.hardware: s for s in view.summaries}
    rubin, gb300 = by_hw["vr-nvl72"], by_hw["gb300-nvl72"]
    assert rubin.simulated_at_target.value == pytest.approx(1.7e6, rel=0.30)
    assert gb300.simulated_at_target.value == pytest.approx(29_310, rel=0.30)
    assert rubin.simulated.x_hi == pytest.approx(1810, rel=0.15)
    assert view.anchoring["vr-nvl72"].anchored and view.anchoring["gb300-nvl72"].anchored
    # like with like: the multiples still divide data by data
    assert rubin.multiple_at_target.kind == "data"
    # the unanchored curve on request, saying so
    raw = explore(full_db, ViewState(unanchored=True), catalog)
    assert not raw.anchoring["vr-nvl72"].anchored
    assert "unanchored" in raw.anchoring["vr-nvl72"].text
    raw_rubin = next(s for s in raw.summaries if s.hardware == "vr-nvl72")
    assert raw_rubin.simulated.x_hi < 1000


def test_nothing_to_anchor_to_says_so(full_db, catalog):
    view = explore(full_db, ViewState(hw=("h200",)), catalog)
    a = view.anchoring["h200"]
    assert not a.anchored and a.text.startswith("unanchored: no measured or published figure")
    assert any("H200" in n and "unanchored" in n for n in view.notes)


def test_the_cli_anchors_to_runs_and_refuses_bad_ids(full_db, capsys):
    import duckdb
    with duckdb.connect(str(full_db), read_only=True) as con:
        rid = con.execute("SELECT id FROM runs WHERE hardware = 'gb300-nvl72' AND model = "
                          "'deepseek-v4.1-flash' AND workload = 'agentx' AND provenance = "
                          "'derived'").fetchone()[0]
        sim = con.execute("SELECT id FROM runs WHERE provenance = 'simulated' LIMIT 1").fetchone()[0]
    argv = ["simulate", "--hardware", "gb300-nvl72", "--model", "deepseek-v4.1-flash",
            "--workload", "agentx", "--search", "--db", str(full_db), "--format", "json"]
    assert cli.main(argv + ["--anchor", rid]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["anchor"]["anchored"] and doc["anchor"]["anchors"][0]["run_id"] == rid
    point = doc["envelope"][0]
    assert {"interactivity_p50", "throughput_total_per_gpu", "band_lo", "band_hi"} <= set(point)
    for bad, words in (("0123456789abcdef", "no run with this id"),
                       (sim, "a simulated run cannot anchor")):
        assert cli.main(argv + ["--anchor", bad]) != 0
        err = capsys.readouterr().err
        assert err.startswith(f"error: --anchor: {bad}: ") and words in err


def test_the_leave_points_out_validation_and_its_stored_figures(catalog):
    from opx.simulate import anchor_validation as V
    result = V.validate(catalog=catalog, limit=2)
    o = result["overall"]
    assert o["envelopes"] >= 1 and o["held_out_points"] >= 2
    for env in result["envelopes"]:
        assert env["held_out"] == env["frontier_points"] - 2
        assert len(env["anchor_residuals_pct"]) == 2
    for key in ("steep", "disaggregated", "one_anchor", "meets", "band_coverage_pct",
                "worse_than_loglog_pct"):
        assert key in o
    # beyond the anchors too, the band's coverage is measured
    one = o["one_anchor"]
    assert one["band_points"] <= one["points"] and 0 <= one["band_coverage_pct"] <= 100
    # each envelope is scored as drawn and as for a model opx has no envelope of, and the
    # figures per kind of shape drawn cover every envelope once
    assert {"model_unseen", "by_shape"} <= set(o)
    by = o["by_shape"]
    assert sum(by[k].get("envelopes", 0) for k in ("model", "disaggregated")) == o["envelopes"]
    assert all(e["shape"] in ("model", "disaggregated", "all") for e in result["envelopes"])
    stored = V.load()
    by = stored["overall"]["by_shape"]
    assert by["model"]["envelopes"] + by["disaggregated"]["envelopes"] \
        == stored["overall"]["envelopes"]
    assert by["all"]["envelopes"] + by["disaggregated"]["envelopes"] \
        == stored["overall"]["envelopes"]
    assert stored and set(stored["overall"]["meets"]) == {"median", "steep", "disaggregated",
                                                          "worse_than_loglog"}
    # the learned shape between the anchors: better than the physics' 20.9 % and log-log's 38.9
    assert stored["overall"]["anchored_mdape"] <= 18
    assert stored["overall"]["loglog_mdape"] >= 2 * stored["overall"]["anchored_mdape"]
    # the pages quote it, beside log-log, under a curve between two anchors
    from types import SimpleNamespace
    shaped = SimpleNamespace(anchored=True, shapes={"p50": "model"})
    assert "log-log" in V.fit_text(shaped)
    # each statistic's curve quotes the figure of the shape it follows: P50 anchors of one run
    # (the shape for all models), P90 anchors of several (the model's own)
    mixed = SimpleNamespace(anchored=True, shapes={"p50": "all", "p90": "model"})
    for pct, kind in (("p50", "all"), ("mean", "all"), ("p90", "model")):
        fig = by[kind]
        assert A.followed_shape(mixed, pct) == kind
        assert f"by {fig['anchored_mdape']:.0f} % (median, {fig['held_out_points']} points" \
            in V.fit_text(mixed, pct)
    # a P90 curve not shaped itself stays under the shaped P50 one and takes its figure
    assert A.followed_shape(SimpleNamespace(shapes={"p50": "model"}), "p90") == "model"
    assert A.followed_shape(SimpleNamespace(shapes={}), "p50") is None


def test_a_mean_anchors_against_the_p50_envelope():
    """InferenceX rows state means only; the model's P50 is calibrated on them."""
    got = A.anchors_from_points(_pts(
        dict(run_id="m", provenance="derived", interactivity_mean=50.0,
             throughput_total_per_gpu=4000.0),
        dict(run_id="m", provenance="measured", interactivity_mean=40.0, interactivity_p50=42.0,
             throughput_total_per_gpu=5000.0)), prefer="p90")
    assert [(a.kind, a.pct, a.x) for a in got] == [("point", "mean", 50.0), ("point", "p50", 42.0)]
    assert A.ANCHOR_PCTS["mean"] == "p50"


def test_the_residual_table_writes_each_projection_in_its_anchors_unit(gb300_fit):
    from opx.answers.anchoring import residual_table
    table = residual_table(gb300_fit)
    assert list(table.anchor) == [r["anchor"] for r in gb300_fit.residuals]
    for text, r in zip(table.projection, gb300_fit.residuals):
        unit = "tok/s/user" if r["kind"] == "single" else "tok/s/GPU"
        assert text.endswith(unit) and text[0].isdigit()
