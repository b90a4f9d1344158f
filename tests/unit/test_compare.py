import numpy as np
import pytest

from opx import metrics
from opx.compare import Side, lead_summary, multiple_curve

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
    from opx.economics import Economics
    e = Economics("x", 2.0, 1000.0, "catalog", "catalog")
    a = Side("A", "A", np.array([10.0, 100.0]), np.array([3000.0, 2000.0]), "measured", e)
    b = Side("B", "B", np.array([10.0, 100.0]), np.array([1000.0, 500.0]), "measured", e)
    cost = metrics.y_metric("usd_per_mtok")
    curve = multiple_curve(a, b, cost, n=10)
    assert curve.multiple.iloc[0] == pytest.approx(1000 / 3000)   # cost ratio = inverse throughput
    assert "A leads" in lead_summary(curve, a, b, cost)
