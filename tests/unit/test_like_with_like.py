"""Headline figures on the default data (published figures and the built-in simulated envelopes):
multiples divide figures of one kind, peaks are stated per kind, and "cannot reach" or "below the
measured range" is said only when it is true of everything drawn for a hardware."""
import json

import pytest

from models import ViewState
from opx import compare, metrics, views
from opx.explorer import explore
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


def test_seed_view_states_the_data_peak_and_the_simulated_peak_apart(full_db, catalog):
    view = explore(full_db, ViewState(), catalog)
    vr = by_hw(view)["vr-nvl72"]
    drawn = view.points[(view.points.hardware == "vr-nvl72") & view.points.simulated]
    assert vr.data.peak == pytest.approx(2.52e6)
    assert vr.simulated.peak == pytest.approx(drawn.tput.max())      # the top of the drawn curve
    assert vr.simulated.peak > vr.data.peak                          # 3.1M, not hidden
    row = view.table().set_index("Hardware").loc["Vera Rubin NVL72"]
    assert row["Peak, data (tok/s/GPU)"] == "2.52M"
    assert row["Provenance at peak"] == "preview (interactivity not stated)"
    assert row["Peak, simulated (tok/s/GPU)"] == metrics.format_value(drawn.tput.max())
    assert row["× GB300 NVL72 at target"] == "58×" and row["× GB300 NVL72 at peak"] == "2.7×"


def test_gb200_against_gb300_divides_simulated_by_simulated(full_db, catalog):
    view = explore(full_db, ViewState(hw=("gb200-nvl72", "gb300-nvl72")), catalog)
    gb200, gb300 = by_hw(view)["gb200-nvl72"], by_hw(view)["gb300-nvl72"]
    assert gb200.data.peak is None and gb300.data.peak == pytest.approx(933_333)
    peak = gb200.multiple_at_peak
    # GB200 has no data peak, so the data peak of GB300 is not divided into GB200's simulated one
    assert peak.value == pytest.approx(gb200.simulated.peak / gb300.simulated.peak)
    # GB300's curve is anchored to its derived figures, GB200's has nothing to anchor to: both
    # are the simulated kind, and the view says which is which
    assert view.anchoring["gb300-nvl72"].anchored and not view.anchoring["gb200-nvl72"].anchored
    raw = explore(full_db, ViewState(hw=("gb200-nvl72", "gb300-nvl72"), unanchored=True), catalog)
    assert by_hw(raw)["gb200-nvl72"].multiple_at_peak.value < 1   # unanchored: GB300 above GB200
    assert peak.kind == "simulated" and peak.text.endswith("(simulated vs simulated)")
    assert peak.caption(TOTAL).endswith("simulated vs simulated")
    # at 387 GB200's only curve (simulated) tops out below: said, and named as simulated
    reason = gb200.multiple_at_target.text
    assert gb200.multiple_at_target.value is None
    top = metrics.format_value(gb200.simulated.x_hi)
    assert reason == (f"GB200 NVL72 cannot reach 387 tok/s/user (simulated curve tops out at "
                      f"{top} tok/s/user)")


def test_target_below_the_data_but_on_the_simulated_curves(full_db, catalog):
    view = explore(full_db, ViewState(target=100), catalog)
    vr, gb = by_hw(view)["vr-nvl72"], by_hw(view)["gb300-nvl72"]
    m = vr.multiple_at_target
    assert m.value == pytest.approx(vr.simulated.at_target.value / gb.simulated.at_target.value)
    assert m.basis == "simulated vs simulated" and "simulated vs simulated" in m.text
    assert "below" not in m.text
    # the data column says what is true of the data alone
    row = view.table().set_index("Hardware").loc["GB300 NVL72"]
    assert row["At 100 tok/s/user, data (tok/s/GPU)"] == "below measured range"
    assert row["At 100 tok/s/user, simulated (tok/s/GPU)"] == \
        metrics.format_value(gb.simulated.at_target.value)


def test_a_stricter_percentile_that_reaches_the_target_is_not_cannot_reach(full_db, catalog):
    # unanchored: the curves as simulated (anchored, GB300's reaches 387 at P50 too)
    view = explore(full_db, ViewState(pct="p50", unanchored=True), catalog)
    vr, gb = by_hw(view)["vr-nvl72"], by_hw(view)["gb300-nvl72"]
    # at P50 neither the data (no P50 stated) nor the simulated curves give a value at 387 ...
    assert gb.simulated.at_target.status == "not_reachable"
    # ... but GB300's derived P90 figure reaches 387, so its P50 does too
    assert gb.stricter is not None and gb.stricter.pct == "p90"
    assert gb.stricter.value == pytest.approx(29_310) and gb.stricter.provenance == "derived"
    assert gb.reachable
    texts = [vr.multiple_at_target.text, gb.target_note, vr.target_note]
    assert not any("cannot reach" in t for t in texts)
    assert "its P90 derived figure reaches it" in gb.target_note
    assert "58× at P90" in vr.multiple_at_target.text
    row = view.table().set_index("Hardware").loc["GB300 NVL72"]
    assert row["At 387 tok/s/user, data (tok/s/GPU)"] == "≥ 29.3k (P90 derived figure)"


def test_cannot_reach_when_every_curve_tops_out_below(full_db, catalog):
    view = explore(full_db, ViewState(target=500), catalog)
    vr, gb = by_hw(view)["vr-nvl72"], by_hw(view)["gb300-nvl72"]
    assert not gb.reachable
    assert vr.multiple_at_target.text == (
        "GB300 NVL72 cannot reach 500 tok/s/user (data top out at 387 tok/s/user; simulated "
        f"curve tops out at {metrics.format_value(gb.simulated.x_hi)} tok/s/user)")


def test_between_the_simulated_curve_and_the_data_neither_is_claimed(full_db, catalog):
    # GB300 unanchored: the simulated curve ends near 327 tok/s/user, the derived figure is at 387
    view = explore(full_db, ViewState(target=380, unanchored=True), catalog)
    gb = by_hw(view)["gb300-nvl72"]
    text = by_hw(view)["vr-nvl72"].multiple_at_target.text
    assert text.startswith("GB300 NVL72 has no figure at 380 tok/s/user")
    assert "cannot reach" not in text and "data start at 387" in text
    assert f"simulated curve tops out at {metrics.format_value(gb.simulated.x_hi)}" in text


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
    seed = json.loads(views.render_link(parse_link("/compare"), "json", full_db, catalog))
    assert seed["multiple_at_target"] == pytest.approx(58.0, rel=1e-3)
    assert seed["multiple_at_peak"] == pytest.approx(2.7, rel=1e-3)
    assert seed["multiple_at_target_basis"] == "preview vs derived"
    assert seed["a"]["peak"] == pytest.approx(2.52e6)
    assert seed["a"]["simulated_peak"] > seed["a"]["peak"]
    explorer = json.loads(views.render_link(parse_link(
        "/?hw=gb200-nvl72&hw=gb300-nvl72&unanchored=1"), "json", full_db, catalog))
    gb200 = next(h for h in explorer["hardware"] if h["hardware"] == "gb200-nvl72")
    assert gb200["multiple_at_peak_kind"] == "simulated"
    assert gb200["multiple_at_peak_text"].endswith("(simulated vs simulated)")
    assert gb200["multiple_at_peak"] < 1
    assert {"at_target", "peak", "simulated_at_target", "anchored", "anchor_residuals"} <= set(gb200)
    assert gb200["anchored"] is False and "unanchored=1" in gb200["anchoring"]
    anchored = json.loads(views.render_link(parse_link("/"), "json", full_db, catalog))
    for h in anchored["hardware"]:
        assert h["anchored"] is True and h["simulated_at_target"] > 0
        assert all(r["within"] for r in h["anchor_residuals"] if r["fitted"])


def test_compare_divides_like_with_like_across_interactivity(full_db, catalog):
    view = explore(full_db, views.compare_state(ViewState()), catalog)
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
