import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from opx.curves.frontier import SNAP, ValueAt, pareto_mask, value_at, values_at

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


def _one_target(xs, ys, target) -> ValueAt:
    """The rule for one target, written out on its own (a reference for `values_at`, which
    answers many at once): above the last point not reachable, below the first below the range,
    a point within SNAP exact, else PCHIP between the two points around it."""
    from scipy.interpolate import PchipInterpolator
    order = np.argsort(xs)
    x, y = np.asarray(xs, float)[order], np.asarray(ys, float)[order]
    if target > x[-1] * (1 + SNAP):
        return ValueAt("not_reachable")
    if target < x[0] * (1 - SNAP):
        return ValueAt("below_range")
    near = np.flatnonzero(np.isclose(x, target, rtol=SNAP, atol=0))
    if near.size:
        return ValueAt("ok", float(y[near[0]]), exact=True, neighbours=(int(order[near[0]]),))
    right = int(np.searchsorted(x, target))
    return ValueAt("ok", float(PchipInterpolator(x, y)(target)), exact=False,
                   neighbours=(int(order[right - 1]), int(order[right])))


@settings(max_examples=200, deadline=None)
@given(point_sets, st.lists(st.floats(min_value=0.1, max_value=8000), max_size=30))
def test_values_at_many_targets_are_the_rule_for_each(pts, targets):
    """A curve across interactivity (Compare's multiple) asks hundreds of targets at once: each
    answer is the one-target rule's, exact points and ends included; a NaN target has no
    figure."""
    x = np.array([p[0] for p in pts])
    y = np.array([p[1] for p in pts])
    m = pareto_mask(x, y)
    fx, fy = x[m], y[m]
    targets = targets + list(fx) + [v * (1 + 5e-10) for v in fx] + [v * (1 - 2e-9) for v in fx]
    assert values_at(fx, fy, targets) == [_one_target(fx, fy, t) for t in targets]
    assert value_at(fx, fy, float("nan")).status == "no_data"


def test_value_at_an_exact_point_and_no_extrapolation():
    x, y = [100.0, 387.0], [2_000_000.0, 1_700_000.0]
    assert value_at(x, y, 387.0).value == 1_700_000.0 and value_at(x, y, 387.0).exact
    assert value_at(x, y, 1 / (1 / 387.0)).exact
    assert value_at(x, y, 388.0).text == "not reachable"
    assert value_at(x, y, 99.0).text == "below measured range"
    mid = value_at(x, y, 200.0)
    assert 1_700_000 < mid.value < 2_000_000 and not mid.exact
    assert value_at([], [], 10).status == "no_data"


def test_provenance_names_read_the_shown_provenance():
    from opx.curves.frontier import kind_of, provenance_names
    assert provenance_names("interpolated between measured / published points") == \
        ["measured", "published"]
    assert provenance_names("preview (interactivity not stated)") == ["preview"]
    assert kind_of("interpolated between simulated points") == "simulated"
    assert kind_of("derived") == "data" and kind_of("interpolated") == "data"
