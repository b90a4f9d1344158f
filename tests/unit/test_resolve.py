"""The resolver's rules, one by one, on envelopes written by hand (docs/metrics.md, "The figure
at the target")."""
import pandas as pd
import pytest

from opx.answers import resolve
from opx.curves.metrics import y_metric

TOTAL, COST = y_metric("total"), y_metric("usd_per_mtok")


def frame(hw: str, points, simulated=False, provenance="measured") -> pd.DataFrame:
    """Envelope rows: (interactivity, throughput per GPU[, run id])."""
    return pd.DataFrame([{"hardware": hw, "simulated": simulated, "on_envelope": True, "x": x,
                          "y": y, "tput": y, "run_id": run, "label": f"run {run}",
                          "provenance": provenance, "gpus_total": 8, "concurrency": c}
                         for (x, y, run), c in zip(((*p, "r")[:3] for p in points),
                                                   range(64, 0, -8))])


def answer(points, target, stricter=None, sim=None, pct="p50", metric=TOTAL, convert=float):
    frames = [f for f in (points, sim) if f is not None]
    pts = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    inputs = resolve.Inputs(pts, pd.DataFrame(), stricter or {}, convert=convert,
                            per_statistic={"mean": 12})
    return resolve.resolve(inputs, "h", "H", target, pct, metric)


DATA = frame("h", [(50, 4000, "a"), (120, 1500, "a"), (160, 1200, "b"), (300, 400, "b")])


def test_a_point_and_an_interpolation_name_their_points():
    at = answer(DATA, 160)
    assert (at.how, at.value, at.kind) == ("point", 1200, "data")
    assert [c.run_id for c in at.configs] == ["b"]
    between = answer(DATA, 140)
    assert between.how == "interpolated" and 1200 < between.value < 1500
    assert [c.x for c in between.configs] == [120, 160]
    assert between.provenance == "interpolated between measured points"


def test_below_the_range_at_least_the_slowest_point():
    low = answer(DATA, 10)
    assert (low.how, low.value, low.bound) == ("at_least", 4000, True)
    assert low.configs[0].x == 50 and low.cell(TOTAL) == "≥ 4k"
    assert "is faster than 10 tok/s/user and so meets it" in low.how_text(10)
    # for a lower-is-better metric the bound is "at most"
    cost = answer(DATA, 10, metric=COST, convert=lambda t: 1e6 / t)
    assert cost.cell(COST).startswith("≤ ") and cost.bound_word == "at most"


def test_a_stricter_statistic_bounds_when_the_statistic_has_nothing():
    p90 = frame("h", [(387, 29_310)], provenance="derived")
    at = answer(None, 387, stricter={"p90": p90})
    assert (at.how, at.value, at.configs[0].pct) == ("stricter", 29_310, "p90")
    assert answer(None, 387, stricter={"p90": p90}, pct="mean").how == "none"  # the mean: no order


def test_data_before_a_projection_and_the_projection_where_data_cannot():
    sim = frame("h", [(20, 9000), (1000, 900)], simulated=True, provenance="simulated")
    assert answer(DATA, 140, sim=sim).kind == "data"
    assert answer(DATA, 10, sim=sim).how == "at_least"           # the data's bound, not the model
    above = answer(DATA, 500, sim=sim)
    assert above.kind == "simulated" and above.how == "interpolated"
    assert above.how_text(500).startswith("projection: ")


def test_nothing_reaches_says_where_each_curve_ends_and_the_fix():
    none = answer(DATA, 400)
    assert not none.ok and none.reason == "H cannot reach 400 tok/s/user (data top out at 300 tok/s/user)"
    assert "lower the target" in none.fix
    empty = answer(None, 100)
    assert empty.reason == "no P50 figure of H" and empty.fix.startswith("switch to mean")


def test_multiples_divide_the_figures_shown():
    a, b = answer(DATA, 10), answer(frame("h", [(50, 1000)], provenance="derived"), 10)
    m = resolve.multiple_at_target(a, b, 10)
    assert m.value == 4 and m.basis == "measured vs derived; both figures are at-least figures"
    assert m.caption(TOTAL) == "≥ 4k vs ≥ 1k tok/s/GPU; measured vs derived; both figures are " \
                               "at-least figures"
    none = resolve.multiple_at_target(a, answer(DATA, 400), 10)
    assert none.value is None and none.reason.startswith("H cannot reach 400")
    # neither side has a figure: each says why, the baseline first
    unreached, empty = answer(DATA, 400), answer(None, 100)
    both = resolve.multiple_at_target(unreached, empty, 100)
    assert both.reason == (f"{empty.reason} ({empty.fix}); {unreached.reason} ({unreached.fix})")
    peak = resolve.multiple_at_peak(resolve.Peak(2.52e6, "preview"), resolve.Peak(933_333, "derived"),
                                    "A", "B")
    assert peak.value == pytest.approx(2.7, rel=1e-3) and peak.basis == "preview vs derived"
    assert resolve.multiple_at_peak(resolve.Peak(None), resolve.Peak(1.0), "A", "B").value is None


def _peak_oracle(inputs, hw, simulated):
    """The peak rule written out on its own: every drawn mark of the kind with a value, curve
    marks before reference lines, the first of the highest throughput."""
    best = None
    for df, unstated in ((inputs.points, False), (inputs.references, True)):
        for row in df.itertuples():
            if row.hardware == hw and bool(row.simulated) == simulated \
                    and not pd.isna(row.y) and not pd.isna(row.tput) \
                    and (best is None or row.tput > best[0].tput):
                best = (row, unstated)
    return None if best is None else (best[0].y, best[0].provenance, best[1])


def test_the_peak_is_the_highest_mark_of_its_kind_curves_before_reference_lines():
    from hypothesis import given, settings, strategies as st

    mark = st.tuples(st.sampled_from(["h", "g"]), st.booleans(),
                     st.one_of(st.none(), st.floats(1, 1e6)),
                     st.sampled_from([10.0, 20.0, 20.0, 5e5]),
                     st.sampled_from(["measured", "published", "simulated"]))

    def frame_of(marks):
        return pd.DataFrame([{"hardware": h, "simulated": s, "y": y, "tput": t, "provenance": p}
                             for h, s, y, t, p in marks],
                            columns=["hardware", "simulated", "y", "tput", "provenance"])

    @settings(max_examples=200, deadline=None)
    @given(st.lists(mark, max_size=8), st.lists(mark, max_size=4), st.booleans())
    def check(points, refs, simulated):
        inputs = resolve.Inputs(frame_of(points), frame_of(refs), {}, convert=float)
        peak = resolve.peak_of_kind(inputs, "h", simulated)
        want = _peak_oracle(inputs, "h", simulated)
        if want is None:
            assert peak.value is None
        else:
            y, provenance, unstated = want
            assert peak.value == y
            assert peak.provenance == provenance + (" (interactivity not stated)"
                                                    if unstated else "")
    check()
