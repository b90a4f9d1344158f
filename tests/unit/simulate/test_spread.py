"""The spread model: P90 from P50 and the operating point (opx/simulate/spread.py)."""
import math

import numpy as np
import pytest

from opx.simulate import spread
from opx.simulate.spread import SpreadPoint


def _doc(k_tpot=0.1, k_ttft=0.3, p99=False):
    per = {"tpot_p90": {"status": "modelled", "k": k_tpot, "heldout_mdape": 17.9, "sources": 5,
                        "points": 5},
           "ttft_p90": {"status": "modelled", "k": k_ttft, "heldout_mdape": 13.5, "sources": 6,
                        "points": 6},
           "tpot_p99": {"status": "not modelled", "why": "3 sources"},
           "ttft_p99": {"status": "not modelled", "why": "3 sources"}}
    if p99:
        per["tpot_p99"] = {"status": "modelled", "k": 0.5, "heldout_mdape": 30.0, "sources": 5,
                           "points": 5}
    return {"form": "ln", "form_text": "1 + k ln C", "percentiles": per}


def test_hand_computed_values():
    # C = 8 per decode instance, C = 4 per prefill instance: ln 8 = 2.0794, ln 4 = 1.3863
    out = spread.apply(_doc(), tpot_p50=[0.010], ttft_p50=[2.0], conc_decode=[8.0],
                       conc_prefill=[4.0])
    assert out["tpot_p90_s"][0] == pytest.approx(0.010 * (1 + 0.1 * 2.0794415), rel=1e-6)
    assert out["ttft_p90_s"][0] == pytest.approx(2.0 * (1 + 0.3 * 1.3862944), rel=1e-6)
    assert out["tpot_p90_s"][0] == pytest.approx(0.0120794, rel=1e-5)
    assert out["ttft_p90_s"][0] == pytest.approx(2.8317766, rel=1e-6)


def test_a_lone_request_has_no_spread_and_below_one_is_clamped():
    out = spread.apply(_doc(), tpot_p50=[0.01, 0.01], ttft_p50=[1.0, 1.0], conc_decode=[1.0, 0.25],
                       conc_prefill=[1.0, 0.5])
    assert np.allclose(out["tpot_p90_s"], 0.01) and np.allclose(out["ttft_p90_s"], 1.0)


def test_monotone_p90_at_least_p50_and_interactivity_at_most_p50():
    rng = np.random.default_rng(0)
    tpot = rng.uniform(1e-3, 0.2, 500)
    ttft = rng.uniform(0.01, 100, 500)
    conc = np.exp(rng.uniform(-2, 9, 500))
    out = spread.apply(_doc(), tpot, ttft, conc, conc / 3)
    assert (out["tpot_p90_s"] >= tpot).all() and (out["ttft_p90_s"] >= ttft).all()
    assert (1 / out["tpot_p90_s"] <= 1 / tpot).all()
    # the ratio grows with concurrency
    order = np.argsort(conc)
    r = (out["tpot_p90_s"] / tpot)[order]
    assert (np.diff(r) >= -1e-12).all()
    # a negative k (never fitted, bounds k >= 0) cannot make P90 faster than P50
    assert (spread.ratio(-1.0, "ln", conc) >= 1).all()


def test_unmodelled_percentiles_stay_missing():
    out = spread.apply(_doc(), [0.01], [1.0], [16.0], [16.0])
    assert set(out) == {"tpot_p90_s", "ttft_p90_s"}           # no P99: too few sources
    assert spread.apply(None, [0.01], [1.0], [16.0], [16.0]) == {}
    assert "tpot_p99_s" in spread.apply(_doc(p99=True), [0.01], [1.0], [16.0], [16.0])
    s = spread.summary(_doc())
    assert s["percentiles"]["tpot_p99"]["status"].startswith("not modelled")
    assert s["percentiles"]["tpot_p90"]["heldout_mdape_pct"] == 17.9
    assert spread.note_text(_doc(), "p99") is None
    note = spread.note_text(_doc(), "p90")
    assert "modelled spread" in note and "TPOT 18 %" in note and "TTFT 14 %" in note


def test_fit_recovers_a_known_k_and_validation_is_honest():
    conc = np.array([2, 4, 8, 16, 64, 100, 300.0])
    r = 1 + 0.2 * np.log(conc)
    k = spread.fit_k(conc, np.ones_like(conc), np.zeros_like(conc), r, "ln")
    assert k == pytest.approx(0.2, rel=1e-3)
    pts = [SpreadPoint(source=f"s{i}", file=f"f{i}", conc=c, agg=1.0, mtp=0.0, requests=None,
                       p50={"tpot": 0.01, "ttft": 1.0},
                       pq={("tpot", "p90"): 0.01 * rr, ("ttft", "p90"): 1.0 * rr},
                       ttft_bound=math.inf) for i, (c, rr) in enumerate(zip(conc, r))]
    v = spread.validate_form(pts, "tpot", "p90", "ln")
    assert v["sources"] == 7 and v["mdape"] < 1e-3              # exact data: no held-out error
    # a constant ratio cannot follow a spread that grows with concurrency
    assert spread.validate_form(pts, "tpot", "p90", "const")["mdape"] > 5
    # noise on one source shows up in that source's held-out error only
    bad = pts[:-1] + [SpreadPoint(**{**pts[-1].__dict__, "pq": {("tpot", "p90"): 0.01 * 3.0}})]
    v = spread.validate_form(bad, "tpot", "p90", "ln")
    # held out, k = 0.2 from the six exact sources: (1 + 0.2 ln 300) / 3 - 1 = -28.6 %
    assert v["per_source"][-1]["error_pct"][0] == pytest.approx(-28.6, abs=0.05)


def test_sample_size_and_artefact_rules():
    base = dict(source="s", file="f", conc=16.0, agg=1.0, mtp=0.0,
                p50={"tpot": 0.01, "ttft": 1.0}, pq={("tpot", "p90"): 0.012, ("tpot", "p99"): 0.02,
                                                      ("ttft", "p90"): 2.0})
    assert spread.usable(SpreadPoint(requests=50, ttft_bound=10.0, **base), "tpot", "p90")[0]
    assert not spread.usable(SpreadPoint(requests=49, ttft_bound=10.0, **base), "tpot", "p90")[0]
    assert not spread.usable(SpreadPoint(requests=100, ttft_bound=10.0, **base), "tpot", "p99")[0]
    assert spread.usable(SpreadPoint(requests=None, ttft_bound=10.0, **base), "tpot", "p99")[0]
    ok, why = spread.usable(SpreadPoint(requests=None, ttft_bound=1.5, **base), "ttft", "p90")
    assert not ok and "artefact" in why
    # the TPOT of a point whose TTFT is an artefact is kept
    assert spread.usable(SpreadPoint(requests=None, ttft_bound=1.5, **base), "tpot", "p90")[0]


def test_stored_fit_matches_a_refit():
    from tests.conftest import SHARED_FIXTURES
    if not SHARED_FIXTURES.is_dir():
        pytest.skip(f"shared fixtures {SHARED_FIXTURES} are absent (the spread fit reads them)")
    shared_fixtures = SHARED_FIXTURES
    doc = spread.load()
    assert doc is not None, "data/simulator/spread.json is missing: python -m opx simulate --spread"
    res = spread.fit(shared_fixtures)
    for name, e in doc["percentiles"].items():
        assert res["percentiles"][name]["status"] == e["status"]
        if e["status"] == "modelled":
            assert res["percentiles"][name]["k"] == pytest.approx(e["k"], rel=1e-3)
            assert res["percentiles"][name]["heldout_mdape"] == pytest.approx(e["heldout_mdape"],
                                                                              abs=0.05)
    # the fitted spread grows with concurrency and P90 >= P50 on every measured point used
    assert doc["percentiles"]["tpot_p90"]["k"] > 0 and doc["percentiles"]["ttft_p90"]["k"] > 0
