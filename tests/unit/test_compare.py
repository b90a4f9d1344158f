import numpy as np
import pytest

from opx.curves import metrics
from opx.answers.compare import Side, lead_summary, multiple_curve

TOTAL = metrics.y_metric("total")


def side(name, xs, ys):
    return Side(name, name, np.array(xs, float), np.array(ys, float), "measured", None)


def test_multiple_curve_marks_where_a_side_cannot_reach():
    a = side("A", [10, 100, 400], [3000, 2000, 1000])
    b = side("B", [10, 100], [1000, 100])
    curve = multiple_curve(a, b, TOTAL, n=50)
    both = curve[curve.status == "both"]
    assert both.x.max() == pytest.approx(100)
    assert both.multiple.iloc[0] == pytest.approx(3.0)          # 3000 / 1000 at x = 10
    assert both[both.x == 100].multiple.iloc[0] == pytest.approx(20.0)
    beyond = curve[curve.x > 100]
    assert set(beyond.status) == {"B cannot reach"} and beyond.multiple.isna().all()
    text = lead_summary(curve, a, b, TOTAL)
    assert "A leads from 10 to 100" in text and "only A reaches (up to 400)" in text


def test_lower_is_better_metrics_invert_who_leads():
    from opx.curves.economics import Economics
    e = Economics("x", 2.0, 1000.0, "catalog", "catalog")
    a = Side("A", "A", np.array([10.0, 100.0]), np.array([3000.0, 2000.0]), "measured", e)
    b = Side("B", "B", np.array([10.0, 100.0]), np.array([1000.0, 500.0]), "measured", e)
    cost = metrics.y_metric("usd_per_mtok")
    curve = multiple_curve(a, b, cost, n=10)
    assert curve.multiple.iloc[0] == pytest.approx(1000 / 3000)   # cost ratio = inverse throughput
    assert "A leads" in lead_summary(curve, a, b, cost)


def test_one_interactivity_in_common_is_not_a_span():
    a = side("A", [387], [1.7e6])
    b = side("B", [387], [29_310])
    curve = multiple_curve(a, b, TOTAL, n=10)
    text = lead_summary(curve, a, b, TOTAL)
    assert text == "A leads at 387 tok/s/user, the one interactivity where both have figures"
    assert "from 387 to 387" not in text


def test_runs_head_to_head_name_their_kinds():
    from opx.answers.compare import run_multiples
    a = Side("ra", "run A", np.array([10.0, 100.0]), np.array([3000.0, 2000.0]), "simulated", None)
    b = Side("rb", "run B", np.array([10.0, 100.0]), np.array([1000.0, 500.0]), "measured", None)
    at_target, at_peak = run_multiples(a, b, 50.0, TOTAL)
    assert at_target.kind == "mixed" and at_target.basis == "mixed: simulated vs measured"
    assert at_peak.value == pytest.approx(3.0) and at_peak.short == "3×"
    # below both runs' range: at least each run's slowest point, as for two hardware
    below, _ = run_multiples(a, b, 5.0, TOTAL)
    assert below.value == pytest.approx(3.0) and "both figures are at-least figures" in below.basis
    above, _ = run_multiples(a, b, 500.0, TOTAL)
    assert above.short == "no multiple" and above.reason.startswith("run B cannot reach 500")


def test_where_only_one_side_reaches_starts_where_the_other_ends():
    """No gap between "leads" and "only ... reaches" from the grid the multiple is drawn on."""
    a = side("A", [19.79, 100, 1668], [3000, 2000, 1000])
    b = side("B", [19.79, 470.3], [1000, 100])
    text = lead_summary(multiple_curve(a, b, TOTAL, n=50), a, b, TOTAL)
    assert "A leads from 19.8 to 470 tok/s/user" in text
    assert "above 470 tok/s/user, where B's curve ends, only A reaches (up to 1,670)" in text
