"""The learned shape anchored curves follow between their anchors (opx/simulate/shape.py), how
an anchored fit uses it (opx/simulate/anchor.py, follow_shape) and the held-out error carried
beside a curve (opx/simulate/held_out.py)."""
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from opx import cli
from opx.curves.frontier import pareto_mask_numpy
from opx.simulate import anchor as A, held_out, shape as SH
from opx.simulate.api import SimKnobs

LOGLOG = SH.Shape(0.0, 0.0, (0.0, 0.0), 0.8, 0, "log-log")


@pytest.fixture(scope="module")
def curves(catalog):
    return SH.measured_curves(catalog)


@settings(max_examples=60, deadline=None)
@given(x0=st.floats(1, 100), span=st.floats(1.1, 50), y1=st.floats(1, 1e4),
       fall=st.floats(1.01, 500), p=st.sampled_from(SH.POWERS), q=st.sampled_from(SH.POWERS))
def test_the_shape_meets_both_ends_and_falls_between_them(x0, span, y1, fall, p, q):
    s = SH.Shape(p, q, (-0.2, 0.2), 0.8, 1, "all")
    x1, y0 = x0 * span, y1 * fall
    xs = np.geomspace(x0, x1, 12)
    ys = SH.between(x0, y0, x1, y1, xs, s)
    assert ys[0] == pytest.approx(y0, rel=1e-6) and ys[-1] == pytest.approx(y1, rel=1e-6)
    assert np.all(np.diff(ys) <= 1e-9 * y0)
    lo, hi = SH.band_between(x0, y0, x1, y1, xs, s)
    assert np.all(lo <= ys * (1 + 1e-9)) and np.all(hi >= ys * (1 - 1e-9))
    # a frontier between two of its points lies between their throughputs: so does the band
    assert np.all(lo >= y1 * (1 - 1e-9)) and np.all(hi <= y0 * (1 + 1e-9))


def test_zero_powers_are_log_log_interpolation():
    got = SH.between(10.0, 1000.0, 100.0, 10.0, np.array([31.6227766]), LOGLOG)
    assert got[0] == pytest.approx(100.0, rel=1e-6)


def test_the_measured_curves_are_runs_and_envelopes(curves):
    scopes = {c.scope for c in curves}
    assert scopes == {"run", "envelope"}
    for c in curves[:50]:
        assert c.x.size >= SH.MIN_POINTS and np.all(np.diff(c.x) > 0) and np.all(np.diff(c.y) < 0)


def test_the_stored_shapes_are_the_fit_on_the_measured_curves(curves):
    stored = SH.load()
    assert stored is not None and stored.disaggregated is not None
    fitted = SH.fit(curves)
    for got, want in ((fitted.default, stored.default),
                      (fitted.disaggregated, stored.disaggregated)):
        assert (got.y_power, got.x_power, got.kind) == (want.y_power, want.x_power, want.kind)
        assert got.band == pytest.approx(want.band, abs=1e-4)
    assert stored.default.curves == len(curves)
    assert stored.disaggregated.curves == sum(map(SH.is_disaggregated_envelope, curves))


def test_disaggregated_envelopes_learn_their_own_shape_with_a_band_no_narrower():
    """Envelopes of disaggregated systems fall in steps, unlike single configurations: they
    learn their own shape (here exactly log y linear in x), the rest keeps the default, and the
    disaggregated band is at least the default's on each side."""
    x = np.geomspace(20, 160, 7)
    runs = [SH.Curve(x, 1e4 * (x / 20) ** -1.2 * (1 + 0.02 * i), "h", f"r{i}", "1k1k", dis,
                     "run") for i, dis in enumerate([False] * 30 + [True] * 10)]
    stepped = [SH.Curve(x, 1e4 * np.exp(-k * (x - 20)), "h", f"d{i}", "1k1k", True, "envelope")
               for i, k in enumerate((0.03, 0.04, 0.05))]
    shapes = SH.fit(runs + stepped)
    dis = shapes.pick(True)
    assert (dis.y_power, dis.x_power, dis.kind, dis.curves) == (0.0, 1.0, "disaggregated", 3)
    for c in stepped:
        np.testing.assert_allclose(SH.between(c.x[0], c.y[0], c.x[-1], c.y[-1], c.x, dis), c.y,
                                   rtol=1e-9)
    assert shapes.pick(False) is shapes.default and shapes.default.kind == "all"
    assert dis.band[0] <= shapes.default.band[0] and dis.band[1] >= shapes.default.band[1]
    # too few disaggregated envelopes to learn from: every curve takes the default
    alone = SH.fit(runs + stepped[:1])
    assert alone.disaggregated is None and alone.pick(True) is alone.default


def test_a_model_learns_its_own_shape_from_its_other_systems_envelopes(curves):
    """A model's envelopes bend alike across systems and workloads: the envelope of a system
    takes the shape learned from its model's envelopes of the other systems, never its own;
    a system opx has no envelope of takes the one from all of them; a run, the default."""
    convex = [SH.Curve(np.geomspace(10, 100, 6), 1e4 * np.geomspace(10, 100, 6) ** -k, f"h{i}",
                       "convex", wl, False, "envelope")
              for i, (k, wl) in enumerate(((1.0, "1k1k"), (1.4, "8k1k"), (2.0, "1k1k"),
                                           (1.2, "1k8k"), (1.7, "8k1k")))]
    for c in convex:                     # straight in log-log, then bent up between the ends
        c.y[1:-1] *= np.exp(-0.3 * np.sin(np.linspace(0, np.pi, c.x.size))[1:-1])
    bowed = [_bent("envelope", 0.3, 6, model=f"b{i}") for i in range(6)]
    shapes = SH.fit(convex + bowed)
    own = shapes.by_model["convex"]
    assert set(own.without) == {SH.system_key(c.hardware, c.workload) for c in convex}
    assert own.without["h0/1k1k"].curves == 4 and own.all.curves == 5
    assert own.all.kind == "model" and "same model" in own.all.describe()
    # its envelopes bend the other way from the rest: each drawn through the shape of the
    # other two misses its points between by less than through the default
    def miss(c, s):
        return np.median(np.abs(SH.between(c.x[0], c.y[0], c.x[-1], c.y[-1], c.x[1:-1], s)
                                / c.y[1:-1] - 1))
    for c in convex:
        assert miss(c, own.for_system(c.hardware, c.workload)) < miss(c, shapes.default)
    assert shapes.pick(False, ("h0", "convex", "1k1k")) is own.without["h0/1k1k"]
    assert shapes.pick(False, ("new-hw", "convex", "1k1k")) is own.all
    assert shapes.pick(False) is shapes.default                       # one configuration's
    assert shapes.pick(False, ("h0", "unknown", "1k1k")) is shapes.default
    assert shapes.without_models().pick(False, ("h0", "convex", "1k1k")) is shapes.default
    # too few envelopes of a model (one here) give it no shape of its own; a system of a model
    # with just enough is left with too few others, and takes the default
    assert "b0" not in shapes.by_model
    few = SH.fit(convex[:SH.MIN_OWN_MODEL] + bowed)
    assert few.by_model["convex"].for_system("h0", "1k1k") is None
    assert few.pick(False, ("h0", "convex", "1k1k")) is few.default
    # the stored shapes are the fit on the built-in curves, each system's without itself
    stored, fitted = SH.load(), SH.fit(curves)
    assert set(stored.by_model) == set(fitted.by_model)
    for m, v in fitted.by_model.items():
        n = sum(c.scope == "envelope" and c.model == m for c in curves)
        assert stored.by_model[m].all.curves == n
        for key, w in v.without.items():
            got = stored.by_model[m].without[key]
            assert (got.y_power, got.x_power, got.curves) == (w.y_power, w.x_power, n - 1)


def _bent(scope: str, bend: float, n: int, model: str = "m") -> SH.Curve:
    """A falling curve whose inner points lie `bend` (in log) above log-log interpolation."""
    x = np.geomspace(10, 100, n)
    y = 1e4 * (x / 10) ** -1.5
    y[1:-1] *= np.exp(bend * np.sin(np.linspace(0, np.pi, n))[1:-1])
    return SH.Curve(x, y, "h", model, "1k1k", False, scope)


def test_the_band_is_the_spread_of_the_envelopes_each_counting_once():
    """Runs (bent little) and one long envelope (bent little at each of its many points) must not
    narrow the band the other envelopes (bent much) need."""
    runs = [_bent("run", 0.01, 12, f"r{i}") for i in range(40)]
    long_flat = [_bent("envelope", 0.01, 60, "long")]
    bent = [_bent("envelope", b, 5, f"e{i}") for i, b in enumerate((0.3, 0.35, 0.4, 0.45, 0.5))]
    shape = SH.fit_one(runs + long_flat + bent)
    # the bent envelopes' own points lie inside the band for most of them
    inside = []
    for c in bent:
        lo, hi = SH.band_between(c.x[0], c.y[0], c.x[-1], c.y[-1], c.x[1:-1], shape)
        inside.append(np.mean((c.y[1:-1] >= lo) & (c.y[1:-1] <= hi)))
    assert np.mean(inside) >= 0.5
    # counted point by point over every curve, the runs and the long envelope make it too narrow
    norm, _ = SH._Held(runs + long_flat + bent).normalised(shape)
    assert np.quantile(norm, 0.9) < shape.band[1] / 2


def test_held_out_the_shape_beats_log_log_on_the_curves_it_did_not_see(curves):
    """Leave one model out on a sample of the curves: the shape fitted on the other models'
    curves misses the held-out points by less than log-log interpolation, and its band covers
    about what it states."""
    sample = [c for c in curves if c.model in {"deepseek-r1", "llama-3.1-70b", "gpt-oss-120b",
                                                "minimax-m2.5"}]
    got = SH.held_out(sample)
    for scope in ("runs", "envelopes"):
        assert got[scope]["mdape"] < got[scope]["loglog_mdape"]
        assert 50 <= got[scope]["band_coverage_pct"] <= 95


def _envelope_anchors(catalog):
    from opx.simulate import anchor_validation as V
    env = next(e for e in V.envelopes(None, catalog)
               if e["system"] == "h200_sxm" and e["model"] == "deepseek-r1"
               and e["workload"] == "1k1k")
    return env, [V._anchor(env, 0, "highest throughput"), V._anchor(env, -1, "highest interactivity")]


def test_an_anchored_curve_follows_the_shape_between_its_anchors(catalog):
    env, anchors = _envelope_anchors(catalog)
    # two runs of a system are its envelope: the shape of its model's other envelopes
    s = SH.load().by_model[env["model"]].without[SH.system_key(env["hardware"], env["workload"])]
    assert s.kind == "model" and s != SH.load().default
    f = A.fit(env["hardware"], env["model"], env["workload"], None, SimKnobs(), catalog, anchors)
    e = f.result.envelope.sort_values("interactivity_p50")
    x, y = e.interactivity_p50.to_numpy(float), e.throughput_total_per_gpu.to_numpy(float)
    assert pareto_mask_numpy(x, y).all()                     # still a frontier
    for a in anchors:                                        # through both anchors
        assert A.loglog_at(x, y, a.x) == pytest.approx(a.y, rel=1e-6)
    x0, x1 = anchors[0].x, anchors[1].x
    mid = (x > x0) & (x < x1)
    assert mid.sum() >= A.SHAPE_STEPS[0]
    want = SH.between(x0, anchors[0].y, x1, anchors[1].y, x[mid], s)
    np.testing.assert_allclose(y[mid], want, rtol=1e-9)
    assert (e.band_lo <= e.throughput_total_per_gpu * (1 + 1e-9)).all()
    assert (e.band_hi >= e.throughput_total_per_gpu * (1 - 1e-9)).all()
    assert any("learned" in n for n in f.notes) and "learned shape" in f.band_method
    assert f.shaped and "learned" in f.band_text()
    # saving it says what the saved runs hold, since that is not the drawn envelope
    assert f.result.saved_note() == A.SAVED_SHAPE_NOTE
    assert all(A.SAVED_SHAPE_NOTE in r.notes for r in f.result.to_runs())
    # the output and input split of each point adds up to its total
    np.testing.assert_allclose(e.throughput_output_per_gpu + e.throughput_input_per_gpu,
                               e.throughput_total_per_gpu, rtol=1e-9)


def test_anchors_of_several_disaggregated_runs_follow_the_disaggregated_shape(catalog):
    """The shape follows what the anchors are: two disaggregated runs are a disaggregated
    system's envelope; aggregated runs a system's envelope, which takes its model's other
    envelopes' shape; one run's two points (one configuration) the default shape."""
    import dataclasses
    env, anchors = _envelope_anchors(catalog)
    shapes = SH.load()
    x0, x1 = anchors[0].x, anchors[1].x

    def drawn(anchor_list):
        f = A.fit(env["hardware"], env["model"], env["workload"], None, SimKnobs(), catalog,
                  anchor_list)
        e = f.result.envelope.sort_values("interactivity_p50")
        x = e.interactivity_p50.to_numpy(float)
        mid = (x > x0) & (x < x1)
        return f, x[mid], e.throughput_total_per_gpu.to_numpy(float)[mid]

    dis = [dataclasses.replace(a, disaggregated=True) for a in anchors]
    f, x, y = drawn(dis)
    np.testing.assert_allclose(y, SH.between(x0, dis[0].y, x1, dis[1].y, x,
                                             shapes.disaggregated), rtol=1e-9)
    assert any("disaggregated envelopes" in n for n in f.notes)
    # the page's caption reads the notes as sentences
    assert f.notes_text().startswith("Between the anchors (P50)") and f.notes_text().endswith(".")
    assert f.notes_text().count(". ") >= len(f.notes) - 1
    # the figure quoted under its chart is the disaggregated envelopes' held-out error
    from opx.simulate import anchor_validation as V
    dis_fig = V.load()["overall"]["by_shape"]["disaggregated"]
    assert A.followed_shape(f) == "disaggregated"
    assert f"by {dis_fig['anchored_mdape']:.0f} %" in V.fit_text(f)
    assert f"{dis_fig['envelopes']} measured envelopes drawn through the disaggregated" \
        in V.fit_text(f)
    one_run = [dataclasses.replace(a, run_id="one") for a in dis]
    own = shapes.pick(False, (env["hardware"], env["model"], env["workload"]))
    for other, shape, kind in ((anchors, own, "model"), (one_run, shapes.default, "all")):
        f, x, y = drawn(other)
        np.testing.assert_allclose(y, SH.between(x0, other[0].y, x1, other[1].y, x, shape),
                                   rtol=1e-9)
        assert not any("disaggregated envelopes" in n for n in f.notes)
        assert A.followed_shape(f) == kind
        # the figure quoted is that of the envelopes drawn with the same kind of shape
        fig = V.load()["overall"]["by_shape"][kind]
        assert f"by {fig['anchored_mdape']:.0f} %" in V.fit_text(f)
        assert "measured envelopes" in V.fit_text(f)


def test_the_cli_draws_a_disaggregated_system_through_its_own_shape(full_db, capsys):
    """`simulate --anchor` on two disaggregated runs of one system says which shape it drew."""
    from opx import store
    with store.reading(full_db) as con:
        ids = [r[0] for r in con.execute(
            "SELECT id FROM runs WHERE hardware = 'gb200-nvl72' AND model = 'deepseek-v3' "
            "AND workload = '1k1k' AND disaggregated AND provenance <> 'simulated' ORDER BY id"
        ).fetchall()]
    assert len(ids) >= 2
    args = ["simulate", "--hardware", "gb200-nvl72", "--model", "deepseek-v3", "--workload",
            "1k1k", "--search", "--db", str(full_db)]
    assert cli.main(args + [a for rid in ids for a in ("--anchor", rid)]) == 0
    text = capsys.readouterr().out
    assert "note: between the anchors (P50) the curve follows the shape learned from " \
           f"{SH.load().disaggregated.curves} measured disaggregated envelopes" in text


def test_anchor_points_say_whether_their_run_is_disaggregated(full_db):
    """The flag the shape is picked by comes from the stored run (opx.store.queries.anchor_points)."""
    from opx import store
    from opx.store import queries
    with store.reading(full_db) as con:
        ids = [r[0] for r in con.execute(
            "SELECT id FROM runs WHERE provenance <> 'simulated' ORDER BY disaggregated DESC, id"
        ).fetchall()]
        flags = dict(con.execute("SELECT id, disaggregated FROM runs").fetchall())
        pts = queries.anchor_points(con, run_ids=[ids[0], ids[-1]])
    got = {a.run_id: a.disaggregated for a in A.anchors_from_points(pts)}
    assert got == {ids[0]: flags[ids[0]], ids[-1]: flags[ids[-1]]}
    assert flags[ids[0]] is True and flags[ids[-1]] is False


def test_one_point_anchor_leaves_the_physics_curve(catalog):
    env, anchors = _envelope_anchors(catalog)
    f = A.fit(env["hardware"], env["model"], env["workload"], None, SimKnobs(), catalog,
              anchors[:1])
    assert not any("learned" in n for n in f.notes)
    assert not f.shaped
    assert f.result.saved_note() == ""
    # the Simulate chart quotes the one-anchor figure, not the two-anchor one
    from opx.publish.charts import simulate_subtitle
    from opx.simulate import anchor_validation as V
    one = V.load()["overall"]["one_anchor"]
    text = " ".join(simulate_subtitle(f.result, f, "p50"))
    assert "the nearest case validated is one point alone" in text
    assert f"misses the frontier's other points by {one['mdape']:.0f} %" in text
    assert "Between two anchors" not in text
    assert "shaded: its band" in text
    unanchored = " ".join(simulate_subtitle(f.result, None, "p50"))
    assert "Unanchored, on models the calibration does not hold" in unanchored
    assert "shaded" not in unanchored
    assert not any(A.SAVED_SHAPE_NOTE in r.notes for r in f.result.to_runs())


def test_the_cli_refits_the_shape_into_its_file(tmp_path, monkeypatch, capsys):
    out = tmp_path / "shape.json"
    monkeypatch.setattr(SH, "default_path", lambda: out)
    assert cli.main(["simulate", "--shape"]) == 0
    text = capsys.readouterr().out
    assert "linear in x^" in text and "worse_than_loglog_pct" in text
    doc = json.loads(out.read_text())
    assert doc["shapes"]["default"]["curves"] > 500 and doc["validation"]["runs"]["mdape"] > 0
    assert doc["shapes"]["disaggregated"]["curves"] == doc["curves"]["disaggregated_envelopes"]
    assert "disaggregated envelopes' shape" in text
    SH.load.cache_clear()


def test_a_large_held_out_error_sits_beside_the_curve():
    err = held_out.beside_curve("b200", "glm-5", anchored=False)
    assert err is not None and err.mdape > held_out.LIMIT and "glm-5" in err.label
    # a system and model validated within the limit carries nothing
    assert held_out.beside_curve("b200", "deepseek-r1", anchored=False) is None
    assert held_out.beside_curve("vr-nvl72", "deepseek-v4.1-flash", anchored=False) is None


def test_the_simulate_chart_draws_the_error_beside_the_envelope(full_db, catalog):
    from models.simulate_view import SimulateState
    from opx.answers.simulation import simulate_view
    from opx.publish.charts import simulate_view_chart
    from opx.publish.render import simulate_json
    v = simulate_view(full_db, SimulateState(hw="b200", model="glm-5", workload="1k1k"), catalog)
    assert v.held_out_error() and "411" not in "" and simulate_json(v)["projection"]["held_out_error"]
    spec = simulate_view_chart(v, catalog).to_dict()
    texts = [d for d in spec.get("datasets", {}).values() for r in d if "error_label" in r]
    assert texts and texts[0][0]["error_label"] == v.held_out_error()


def test_the_p90_curve_stays_under_the_reshaped_p50_curve(catalog):
    env, anchors = _envelope_anchors(catalog)
    f = A.fit(env["hardware"], env["model"], env["workload"], None, SimKnobs(), catalog, anchors)
    e50 = f.result.envelope.sort_values("interactivity_p50")
    x50, y50 = e50.interactivity_p50.to_numpy(float), e50.throughput_total_per_gpu.to_numpy(float)
    e90 = f.result.envelope_p90
    assert e90 is not None and not e90.empty
    for x, y in zip(e90.interactivity_p90, e90.throughput_total_per_gpu):
        cap = A.loglog_at(x50, y50, x)
        assert cap is None or y <= cap * (1 + 1e-9)


def test_below_the_p50_curve_s_reach_the_p90_curve_stays_under_its_highest_point():
    """A P90 point slower than every P50 point still has its P50 on the P50 frontier, further
    right: its throughput is at most the P50 envelope's highest (anchors that disagree 20x with
    the physics once scaled a P90 curve there to 55M tok/s/GPU)."""
    env50 = pd.DataFrame({"interactivity_p50": [70.0, 200.0, 400.0],
                          "throughput_total_per_gpu": [2.5e6, 2.0e6, 1.0e6]})
    env90 = pd.DataFrame({"interactivity_p90": [45.0, 60.0, 150.0, 380.0],
                          "throughput_total_per_gpu": [5.5e7, 5.2e7, 2.1e6, 0.9e6]})
    out = A._under(env90, env50).sort_values("interactivity_p90")
    assert out.throughput_total_per_gpu.max() <= 2.5e6
    assert out.throughput_total_per_gpu.iloc[-1] == 0.9e6          # under the cap: unchanged


def test_the_explorer_draws_a_large_held_out_error_beside_the_curve(full_db, tmp_path, catalog):
    """A saved unanchored GLM-5 curve carries its leave-one-model-out error beside it on the
    Explorer's chart and in its JSON; anchored to the same system's data it carries the smaller
    leave-points-out figure, which is under the limit, so nothing."""
    import shutil
    from models import ViewState
    from opx.publish import charts
    from opx.answers.explorer import explore
    db = tmp_path / "opx.duckdb"
    shutil.copy(full_db, db)
    assert cli.main(["simulate", "--hardware", "b200", "--model", "glm-5", "--workload", "1k1k",
                     "--save", "--db", str(db)]) == 0
    base = dict(model="glm-5", workload="1k1k", hw=["b200"], pct="p50")
    want = held_out.beside_curve("b200", "glm-5", anchored=False).label
    view = explore(db, ViewState(**base, unanchored=True), catalog)
    spec = json.dumps(charts.explorer_chart(view, catalog).to_dict())
    assert want in spec
    anchored = explore(db, ViewState(**base), catalog)
    assert want not in json.dumps(charts.explorer_chart(anchored, catalog).to_dict())


def test_anchors_beyond_the_physics_reach_keep_one_continuous_frontier():
    """Both anchors faster than the physics' envelope reaches: the physics' part is scaled to
    meet them at its own end, and the result is one frontier through both anchors."""
    import pandas as pd
    x = np.geomspace(10, 200, 12)
    y = 20000 * (1 - x / 220)
    env = pd.DataFrame({"interactivity_p50": x, "throughput_total_per_gpu": y,
                        "throughput_output_per_gpu": y / 2, "throughput_input_per_gpu": y / 2,
                        "band_lo": y * 0.9, "band_hi": y * 1.1, "layout": "TP8",
                        "concurrency": np.arange(12.0), "tpot_p50_s": 1 / x})
    shape = SH.load().default
    out = A._shaped_envelope(env, "p50", np.array([300.0, 500.0]), np.array([3000.0, 1000.0]),
                             shape)
    ox, oy = out.interactivity_p50.to_numpy(float), out.throughput_total_per_gpu.to_numpy(float)
    assert pareto_mask_numpy(ox, oy).all() and (ox < 300).sum() >= 11   # the last meets the anchor
    o = np.argsort(ox)
    assert A.loglog_at(ox[o], oy[o], 300.0) == pytest.approx(3000.0, rel=1e-6)
    assert A.loglog_at(ox[o], oy[o], 500.0) == pytest.approx(1000.0, rel=1e-6)
    # a NaN row or anchor is left out, never a crash
    bad = env.copy()
    bad.loc[0, "interactivity_p50"] = np.nan
    assert not A._shaped_envelope(bad, "p50", np.array([20.0, 100.0]),
                                  np.array([15000.0, 9000.0]), shape).empty


def test_the_tradeoff_script_scores_every_shape_against_log_log():
    """scripts/shape_tradeoff.py (docs/simulator.md): on a curve that is straight in log-log and
    one on which y^0.5 is linear in x, log-log is never worse than itself, and the pair (0.5, 1)
    meets the second curve exactly and is worse than log-log on the first only."""
    import importlib.util

    import numpy as np

    from tests.conftest import ROOT
    spec = importlib.util.spec_from_file_location("shape_tradeoff",
                                                  ROOT / "scripts" / "shape_tradeoff.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    x = np.geomspace(10, 400, 7)
    straight = {"x": x, "y": 5000 * (x / 10) ** -1.2}
    bent = {"x": x, "y": (100 - 0.2 * x) ** 2}
    table = {(round(p, 1) + 0.0, round(q, 1) + 0.0): (m, w)
             for m, w, p, q in script.scores([straight, bent])}
    assert len(table) == len(SH.POWERS) ** 2
    assert table[(0.0, 0.0)][1] == 0.0 and table[(0.0, 0.0)][0] > 1.0
    assert table[(0.5, 1.0)][1] == 50.0


def test_the_explorer_and_simulate_quote_one_held_out_figure_for_a_curve(full_db, catalog):
    """The seed view's curves are anchored on a point, a peak and a single session: both pages
    quote the one-anchor figure for them, from one function, never the two-anchor one."""
    from models import ViewState
    from models.simulate_view import SimulateState
    from opx.answers.explorer import explore
    from opx.simulate import anchor_validation as V
    from opx.answers.simulation import default_anchors, simulate_view
    from opx.publish.charts import simulate_view_chart
    view = explore(full_db, ViewState(), catalog)
    errors = [n for n in view.notes if n.startswith("Simulated curves' error")]
    hw = view.state.hw[0]
    ids = default_anchors(full_db, view.state, hw, catalog)
    sim = simulate_view(full_db, SimulateState(hw=hw, model=view.state.model,
                                               workload=view.state.workload,
                                               pct=view.state.pct, anchor=ids), catalog)
    want = V.fit_text(sim.fit)
    assert sim.fit.anchored and not sim.fit.shaped and "one point alone" in want
    assert any(want in n and catalog.hardware_name(hw) in n for n in errors)
    assert not any("Between two anchors" in n for n in errors)
    assert want in " ".join(simulate_view_chart(sim, catalog).to_dict()["title"]["subtitle"])


def test_a_shaped_envelope_s_rows_keep_their_statistics_consistent(catalog):
    """A point the shape draws takes the nearest physics point's other fields; its other
    statistic moves with it (P90 never faster than P50) and its latencies agree with it."""
    env, anchors = _envelope_anchors(catalog)
    f = A.fit(env["hardware"], env["model"], env["workload"], None, SimKnobs(), catalog, anchors)
    assert f.shaped
    for e in (f.result.envelope, f.result.envelope_p90):
        assert (e.interactivity_p90 <= e.interactivity_p50 * (1 + 1e-9)).all()
        np.testing.assert_allclose(e.tpot_p50_s, 1 / e.interactivity_p50, rtol=1e-9)
        np.testing.assert_allclose(e.tpot_p90_s, 1 / e.interactivity_p90, rtol=1e-9)
        tokens = (e.e2e_p50_s - e.ttft_p50_s) / e.tpot_p50_s          # OSL - 1, every row alike
        np.testing.assert_allclose(tokens, tokens.iloc[0], rtol=1e-6)
