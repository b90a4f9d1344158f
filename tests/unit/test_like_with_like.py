"""Headline figures on the default data (published figures and the built-in simulated envelopes):
data answers before a projection, multiples divide the figures shown and say their kinds, one peak
per hardware, below the range an at-least figure, and "cannot reach" only when it is true of
everything drawn for a hardware."""
import json

import pytest

from models import ViewState
from opx.answers import compare
from opx.curves import metrics
from opx.publish import link_view, render
from opx.answers.explorer import explore
from opx.links import parse_link

TOTAL = metrics.y_metric("total")


def by_hw(view):
    return {s.hardware: s for s in view.summaries}


def test_seed_view_keeps_58x_and_2_7x_from_data(full_db, catalog):
    view = explore(full_db, ViewState(), catalog)
    vr = by_hw(view)["vr-nvl72"]
    assert vr.multiple_at_target.value == pytest.approx(58.0, rel=1e-3)
    assert vr.multiple_at_target.kind == "data"
    assert vr.multiple_at_target.basis == "preview vs derived"
    assert vr.multiple_at_target.caption(TOTAL) == "1.7M vs 29.3k tok/s/GPU; preview vs derived"
    assert vr.multiple_at_peak.value == pytest.approx(2.7, rel=1e-3)
    assert vr.multiple_at_peak.caption(TOTAL) == "2.52M vs 933k tok/s/GPU; preview vs derived"
    assert (vr.multiple_at_target.short, vr.multiple_at_peak.short) == ("58×", "2.7×")


def test_seed_view_has_one_peak_per_hardware(full_db, catalog):
    view = explore(full_db, ViewState(), catalog)
    vr = by_hw(view)["vr-nvl72"]
    drawn = view.points[(view.points.hardware == "vr-nvl72") & view.points.simulated]
    assert vr.peak == pytest.approx(2.52e6)                  # the data's, not the projection's
    assert vr.simulated.peak == pytest.approx(drawn.tput.max()) and vr.simulated.peak > vr.peak
    row = view.table().set_index("Hardware").loc["Vera Rubin NVL72"]
    assert row["Peak (tok/s/GPU)"] == "2.52M"
    assert row["Provenance at peak"] == "preview (interactivity not stated)"
    assert not any("simulated" in c.lower() and "peak" in c.lower() for c in view.table().columns)
    assert row["× GB300 NVL72 at target"] == "58×" and row["× GB300 NVL72 at peak"] == "2.7×"


def test_a_hardware_without_data_divides_its_projection_by_the_data(full_db, catalog):
    view = explore(full_db, ViewState(hw=("gb200-nvl72", "gb300-nvl72", "b200", "vr-nvl72")),
                   catalog)
    gb200, gb300 = by_hw(view)["gb200-nvl72"], by_hw(view)["gb300-nvl72"]
    assert gb200.data.peak is None and gb300.peak == pytest.approx(933_333)
    peak = gb200.multiple_at_peak
    # one peak each: GB200's is its projection's, GB300's its data's; the multiple says it mixes
    assert peak.value == pytest.approx(gb200.simulated.peak / 933_333)
    assert peak.kind == "mixed" and peak.basis == "mixed: simulated vs derived"
    # the same GB300 peak under every card of the screen
    assert {m.multiple_at_peak.b.value for m in view.summaries if m.multiple_at_peak} == {933_333}
    # at 387 GB200's only curve (simulated) tops out below: said, with the fix
    assert gb200.multiple_at_target.value is None
    top = metrics.format_value(gb200.simulated.x_hi)
    assert gb200.multiple_at_target.reason.startswith(
        f"GB200 NVL72 cannot reach 387 tok/s/user (simulated curve tops out at {top} tok/s/user)")
    assert "lower the target" in gb200.multiple_at_target.reason


def test_below_the_data_the_faster_point_is_an_at_least_figure(full_db, catalog):
    view = explore(full_db, ViewState(target=100), catalog)
    vr, gb = by_hw(view)["vr-nvl72"], by_hw(view)["gb300-nvl72"]
    # a system that serves 387 tok/s/user serves 100: at least its 387 figure, named
    assert (vr.answer.value, gb.answer.value) == (1.7e6, 29_310)
    assert vr.answer.how == gb.answer.how == "at_least" and vr.answer.kind == "data"
    assert vr.answer.configs[0].x == 387
    m = vr.multiple_at_target
    assert m.value == pytest.approx(58.0, rel=1e-3)
    assert m.caption(TOTAL) == ("≥ 1.7M vs ≥ 29.3k tok/s/GPU; preview vs derived; both figures "
                                "are at-least figures")
    row = view.table().set_index("Hardware").loc["GB300 NVL72"]
    assert row["At 100 tok/s/user (tok/s/GPU)"] == "≥ 29.3k"
    assert "387 tok/s/user (P90) is faster than 100 tok/s/user" in row["How"]
    # the projection's own value is beside it, never replacing it
    assert row["Projection at target (tok/s/GPU)"] == \
        metrics.format_value(gb.simulated.at_target.value)


def test_a_stricter_percentile_that_reaches_the_target_is_an_at_least_figure(full_db, catalog):
    # unanchored: the curves as simulated (anchored, GB300's reaches 387 at P50 too)
    view = explore(full_db, ViewState(pct="p50", unanchored=True), catalog)
    vr, gb = by_hw(view)["vr-nvl72"], by_hw(view)["gb300-nvl72"]
    assert gb.simulated.at_target.status == "not_reachable"
    # GB300's derived P90 figure reaches 387, so its P50 does too: data before a projection
    assert gb.answer.how == "stricter" and gb.answer.configs[0].pct == "p90"
    assert gb.answer.value == pytest.approx(29_310) and gb.answer.provenance == "derived"
    assert gb.reachable and vr.answer.how == "stricter"
    assert vr.multiple_at_target.value == pytest.approx(58.0, rel=1e-3)
    assert "stricter statistic" in gb.answer.how_text(387)
    row = view.table().set_index("Hardware").loc["GB300 NVL72"]
    assert row["At 387 tok/s/user (tok/s/GPU)"] == "≥ 29.3k"


def test_cannot_reach_when_every_curve_tops_out_below(full_db, catalog):
    view = explore(full_db, ViewState(target=500), catalog)
    vr, gb = by_hw(view)["vr-nvl72"], by_hw(view)["gb300-nvl72"]
    assert gb.reachable is False
    assert vr.multiple_at_target.text.startswith(
        "GB300 NVL72 cannot reach 500 tok/s/user (data top out at 387 tok/s/user; simulated "
        f"curve tops out at {metrics.format_value(gb.simulated.x_hi)} tok/s/user)")


def test_between_the_simulated_curve_and_the_data_the_data_answers(full_db, catalog):
    # GB300 unanchored: the simulated curve ends near 327 tok/s/user, the derived figure is at 387
    view = explore(full_db, ViewState(target=380, unanchored=True), catalog)
    gb = by_hw(view)["gb300-nvl72"]
    assert gb.answer.how == "at_least" and gb.answer.value == 29_310


@pytest.mark.parametrize("state", [ViewState(), ViewState(target=100), ViewState(target=500),
                                   ViewState(pct="p50"), ViewState(pct="p99"),
                                   ViewState(hw=("gb200-nvl72", "gb300-nvl72")),
                                   ViewState(source=("preview",))])
def test_tables_and_headlines_read(full_db, catalog, state):
    view = explore(full_db, state, catalog)
    table = view.table()
    for cell in table.to_numpy().ravel():
        assert isinstance(cell, str) and cell not in ("–", "None", "nan") and "None" not in cell
    for column in table.columns:
        if column.startswith(("At ", "Peak")):
            assert column.endswith("(tok/s/GPU)")
    for s in view.summaries:
        for m in (s.multiple_at_target, s.multiple_at_peak):
            if m is not None:
                assert len(m.short) <= len("no multiple")      # a headline value fits its card
                assert m.caption(TOTAL) and "–" not in m.caption(TOTAL)


def test_exports_carry_the_kinds(full_db, catalog):
    seed = json.loads(render.render_link(parse_link("/compare"), "json", full_db, catalog))
    assert seed["multiple_at_target"] == pytest.approx(58.0, rel=1e-3)
    assert seed["multiple_at_peak"] == pytest.approx(2.7, rel=1e-3)
    assert seed["multiple_at_target_basis"] == "preview vs derived"
    assert seed["a"]["peak"] == pytest.approx(2.52e6)
    assert seed["a"]["simulated_at_target"] > 0 and "simulated_peak" not in seed["a"]
    assert seed["target_rule"].startswith("Data first")
    explorer = json.loads(render.render_link(parse_link(
        "/?hw=gb200-nvl72&hw=gb300-nvl72&unanchored=1"), "json", full_db, catalog))
    gb200 = next(h for h in explorer["hardware"] if h["hardware"] == "gb200-nvl72")
    assert gb200["multiple_at_peak_kind"] == "mixed"
    assert gb200["multiple_at_peak_text"].endswith("(mixed: simulated vs derived)")
    assert {"at_target", "peak", "simulated_at_target", "anchored", "anchor_residuals"} <= set(gb200)
    assert gb200["anchored"] is False and "unanchored=1" in gb200["anchoring"]
    anchored = json.loads(render.render_link(parse_link("/"), "json", full_db, catalog))
    for h in anchored["hardware"]:
        assert h["anchored"] is True and h["simulated_at_target"] > 0
        assert all(r["within"] for r in h["anchor_residuals"] if r["fitted"])


def test_compare_divides_like_with_like_across_interactivity(full_db, catalog):
    view = explore(full_db, link_view.compare_state(ViewState()), catalog)
    a, b = compare.sides_from_view(view, catalog)
    # the data figures meet at one interactivity only, so the curve divides the simulated ones
    assert (a.name, b.name) == ("Vera Rubin NVL72 (simulated)", "GB300 NVL72 (simulated)")
    assert compare.curve_basis(a, b) == "simulated vs simulated"
    at_target, at_peak = compare.hardware_multiples(view)
    assert (at_target.short, at_peak.short) == ("58×", "2.7×")
    assert compare.curve_note(a, b, at_target) == (
        "The curve divides simulated vs simulated figures; the multiple at the target divides "
        "preview vs derived figures.")
    curve = compare.multiple_curve(a, b, TOTAL)
    assert "below measured range" not in set(curve.status)     # a simulated range is not measured


def test_money_captions_say_dollars_without_scientific_notation(full_db, catalog):
    view = explore(full_db, ViewState(y="usd_per_mtok"), catalog)
    vr = next(s for s in view.summaries if s.hardware == "vr-nvl72")
    caption = vr.multiple_at_target.caption(metrics.y_metric("usd_per_mtok"))
    assert caption.startswith("$0.000") and " vs $0.02" in caption and "/M tokens" in caption
    assert "e-0" not in caption


def test_a_peak_multiple_without_a_side_says_why_and_the_fix(full_db, catalog):
    """A system with nothing drawn under the view's statistic has no peak: the peak multiple
    says so as the target's answer does (which statistic has its figures), not "no data"."""
    seen = 0
    for pct in ("mean", "p50", "p90", "p99"):
        view = explore(full_db, ViewState(model="deepseek-r1", workload="1k1k",
                                          hw=("gb300-nvl72", "h200"), pct=pct), catalog)
        summaries = by_hw(view)
        for s in summaries.values():
            m = s.multiple_at_peak
            if m is None or m.value is not None:
                continue
            # each side without a peak says why, the baseline first
            for x in (summaries[view.baseline], s):
                if x.peak_figure.value is None:
                    assert x.answer.reason in m.reason and x.name in m.reason
            if summaries[view.baseline].peak_figure.value is None:
                assert m.reason.startswith(summaries[view.baseline].answer.reason)
            assert "data" != m.reason.split()[-1] and "switch to" in m.reason
            seen += 1
    assert seen, "no statistic left a system without a peak: the case is not exercised"
