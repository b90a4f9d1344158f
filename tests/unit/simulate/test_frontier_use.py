"""The simulator's envelopes use opx.curves.frontier's rule, the one the Explorer and Compare use."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opx.curves.frontier import pareto_mask, pareto_mask_numpy
from opx.simulate import SimKnobs, api, simulate

# few distinct values, so that equal x, equal y and equal (x, y) pairs are common
tied = st.sampled_from([0.5, 1.0, 1.0 + 1e-12, 2.0, 3.0, 40.0])
point_sets = st.lists(st.tuples(tied, tied), min_size=0, max_size=40)


@settings(max_examples=300, deadline=None)
@given(point_sets)
def test_numpy_evaluation_gives_the_sql_flags(pts):
    x = np.array([p[0] for p in pts], dtype=float)
    y = np.array([p[1] for p in pts], dtype=float)
    assert pareto_mask_numpy(x, y).tolist() == pareto_mask(x, y).tolist()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(0.01, 1e4), st.floats(0, 3e6)), min_size=1, max_size=200))
def test_numpy_evaluation_gives_the_sql_flags_on_any_finite_set(pts):
    x = np.array([p[0] for p in pts])
    y = np.array([p[1] for p in pts])
    assert pareto_mask_numpy(x, y).tolist() == pareto_mask(x, y).tolist()


def test_numpy_evaluation_on_a_large_set_and_its_limits():
    rng = np.random.default_rng(14)
    x = np.round(rng.lognormal(3, 1, 20_000), 1)          # rounded: many ties
    y = np.round(rng.lognormal(10, 1, 20_000), -2)
    assert np.array_equal(pareto_mask_numpy(x, y), pareto_mask(x, y))
    assert pareto_mask_numpy([10, 20, 30, 20, 5], [100, 80, 10, 50, 90]).tolist() == \
        [True, True, True, False, False]
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match="finite"):
            pareto_mask_numpy([1.0, bad], [1.0, 2.0])
    with pytest.raises(ValueError):
        pareto_mask_numpy([1.0, 2.0], [1.0])


def test_the_simulator_has_no_frontier_code_of_its_own():
    assert api.pareto_mask_numpy is pareto_mask_numpy
    assert not [n for n in vars(api) if "pareto" in n.lower() and n != "pareto_mask_numpy"]


@pytest.mark.parametrize("case", [
    ("gb300-nvl72", "deepseek-r1", "1k1k", None, dict(mtp_depth=1)),
    ("h200", "llama-3.3-70b", "8k1k", None, {}),
])
def test_simulated_envelopes_are_the_sql_frontier(catalog, case):
    """The P50 and P90 envelopes are exactly the points pareto_mask (the store's SQL) puts on the
    frontier of every evaluated point of the returned curves (the curves hold every envelope
    point, and dropping points off the frontier changes no other point's flag)."""
    hw, model, wl, gpus, kw = case
    r = simulate(hw, model, wl, gpus, SimKnobs(**kw), catalog)
    pf = r.points_frame()
    for col, env in (("interactivity_p50", r.envelope), ("interactivity_p90", r.envelope_p90)):
        pts = pf[np.isfinite(pf[col])]
        sql = pts[pareto_mask(pts[col].to_numpy(), pts.throughput_total_per_gpu.to_numpy())]
        assert len(env) > 3
        assert (sorted(zip(sql.layout, sql.concurrency))
                == sorted(zip(env.layout, env.concurrency)))
