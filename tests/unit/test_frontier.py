import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from opx.frontier import multiple_at_peak, multiple_at_target, pareto_mask, value_at
from opx.metrics import y_metric

coords = st.floats(min_value=0.5, max_value=5000, allow_nan=False, allow_infinity=False)
point_sets = st.lists(st.tuples(coords, st.floats(min_value=0, max_value=3e6, allow_nan=False)),
                      min_size=1, max_size=40)


def _dominates(a, b):
    """a weakly dominates b: at least as good on both axes."""
    return a[0] >= b[0] and a[1] >= b[1]


@settings(max_examples=200, deadline=None)
@given(point_sets)
def test_frontier_points_are_non_dominated_and_dominate_the_rest(pts):
    x = np.array([p[0] for p in pts])
    y = np.array([p[1] for p in pts])
    mask = pareto_mask(x, y)
    front = [pts[i] for i in np.flatnonzero(mask)]
    assert front, "a non-empty set has a frontier"
    for i, a in enumerate(front):
        for j, b in enumerate(front):
            if i != j:
                assert not _dominates(a, b), f"{a} dominates {b}, both on the frontier"
    for i in np.flatnonzero(~mask):
        assert any(_dominates(f, pts[i]) for f in front)


def test_frontier_of_a_known_set():
    x = [10, 20, 30, 20, 5]
    y = [100, 80, 10, 50, 90]
    assert pareto_mask(x, y).tolist() == [True, True, True, False, False]


@settings(max_examples=200, deadline=None)
@given(point_sets, st.floats(min_value=0.5, max_value=5000))
def test_interpolated_value_lies_between_its_neighbours(pts, target):
    x = np.array([p[0] for p in pts])
    y = np.array([p[1] for p in pts])
    m = pareto_mask(x, y)
    fx, fy = x[m], y[m]
    v = value_at(fx, fy, target)
    if target > fx.max() * (1 + 1e-9):
        assert v.status == "not_reachable" and v.value is None
    elif target < fx.min() * (1 - 1e-9):
        assert v.status == "below_range" and v.value is None
    else:
        assert v.status == "ok"
        ys = fy[list(v.neighbours)]
        assert ys.min() - 1e-6 <= v.value <= ys.max() + 1e-6


def test_value_at_an_exact_point_and_no_extrapolation():
    x, y = [100.0, 387.0], [2_000_000.0, 1_700_000.0]
    assert value_at(x, y, 387.0).value == 1_700_000.0 and value_at(x, y, 387.0).exact
    assert value_at(x, y, 1 / (1 / 387.0)).exact
    assert value_at(x, y, 388.0).text == "not reachable"
    assert value_at(x, y, 99.0).text == "below measured range"
    mid = value_at(x, y, 200.0)
    assert 1_700_000 < mid.value < 2_000_000 and not mid.exact
    assert value_at([], [], 10).status == "no_data"


reach = st.sampled_from(["in", "above", "below"])


@settings(max_examples=100, deadline=None)
@given(reach, reach)
def test_multiple_is_undefined_exactly_when_a_side_cannot_reach(a_pos, b_pos):
    frontier_x, frontier_y = [100.0, 400.0], [1000.0, 500.0]
    target = {"in": 200.0, "above": 1000.0, "below": 10.0}
    a = value_at(frontier_x, frontier_y, target[a_pos])
    b = value_at(frontier_x, [v / 10 for v in frontier_y], target[b_pos])
    assume(True)
    m = multiple_at_target(a, b, "A", "B", "x")
    if a_pos == "in" and b_pos == "in":
        assert m.value == pytest.approx(a.value / b.value)
    else:
        assert m.value is None and m.reason


def test_multiple_names_the_side_that_cannot_reach():
    a = value_at([100.0, 500.0], [10.0, 5.0], 450.0)
    b = value_at([100.0, 300.0], [4.0, 1.0], 450.0)
    assert multiple_at_target(a, b, "Rubin", "GB300", "450 tok/s/user").text == \
        "GB300 cannot reach 450 tok/s/user"
    assert multiple_at_peak(2.52e6, 933333.0, "A", "B").value == pytest.approx(2.7, rel=1e-3)
    assert multiple_at_peak(None, 1.0, "A", "B").value is None


def test_like_with_like_prefers_data_then_simulated_then_names_a_mix():
    from opx.frontier import Figure, divide, like_with_like
    data_a, sim_a = Figure(1.7e6, "preview"), Figure(3.1e6, "simulated")
    data_b, sim_b = Figure(29_310, "derived"), Figure(1.1e6, "interpolated between simulated points")
    assert like_with_like([data_a, sim_a], [data_b, sim_b]) == (data_a, data_b)
    assert like_with_like([sim_a], [data_b, sim_b]) == (sim_a, sim_b)
    assert like_with_like([data_a, sim_a], [sim_b]) == (sim_a, sim_b)
    assert like_with_like([sim_a], [data_b]) == (sim_a, data_b)
    assert like_with_like([], [data_b]) is None
    data = divide(data_a, data_b, "B", "at 387")
    assert (data.kind, data.basis, data.text) == ("data", "preview vs derived", "58×")
    sim = divide(sim_a, sim_b, "B", "at 387")
    assert sim.kind == "simulated" and sim.text == f"{sim.short} (simulated vs simulated)"
    mixed = divide(sim_a, data_b, "B", "at 387")
    assert mixed.kind == "mixed" and mixed.basis == "mixed: simulated vs derived"
    assert mixed.text.endswith("(mixed: simulated vs derived)")
    assert divide(data_a, Figure(0.0, "measured"), "B", "at 387").reason == "B is zero at 387"


def test_a_multiple_without_a_number_is_short_in_a_headline_and_says_why_beside_it():
    a = value_at([100.0, 500.0], [10.0, 5.0], 450.0)
    b = value_at([100.0, 300.0], [4.0, 1.0], 450.0)
    m = multiple_at_target(a, b, "Rubin", "GB300", "450 tok/s/user")
    assert m.short == "no multiple" and m.caption(y_metric("total")) == "GB300 cannot reach 450 tok/s/user"
    assert m.kind == "" and m.basis == ""


def test_provenance_names_read_the_shown_provenance():
    from opx.frontier import kind_of, provenance_names
    assert provenance_names("interpolated between measured / published points") == \
        ["measured", "published"]
    assert provenance_names("preview (interactivity not stated)") == ["preview"]
    assert kind_of("interpolated between simulated points") == "simulated"
    assert kind_of("derived") == "data" and kind_of("interpolated") == "data"
