"""The database built on first run holds simulated envelopes, kept apart from the data."""
import pytest

from models import ViewState
from opx import store
from opx.builtin import SIMULATED_HARDWARE, SIMULATED_WORKLOADS
from opx.explorer import explore


def test_every_builtin_system_has_a_simulated_envelope(full_db):
    with store.reading(full_db) as con:
        rows = con.execute("SELECT DISTINCT hardware, workload FROM runs "
                           "WHERE provenance = 'simulated'").fetchall()
        meta = con.execute("SELECT meta FROM runs WHERE provenance = 'simulated' LIMIT 1").fetchone()[0]
    assert {(h, w) for h, w in rows} == {(h, w) for h in SIMULATED_HARDWARE for w in SIMULATED_WORKLOADS}
    assert '"engine": "opx-sim"' in meta and "validation" in meta and "parameters" in meta


def test_the_seed_figures_are_unchanged_by_the_simulations(full_db, catalog):
    view = explore(full_db, ViewState(), catalog)
    vr = next(s for s in view.summaries if s.hardware == "vr-nvl72")
    assert vr.at_target.value == pytest.approx(1.7e6)
    assert vr.multiple_at_target.value == pytest.approx(58.0, rel=1e-3)
    assert vr.multiple_at_peak.value == pytest.approx(2.7, rel=1e-3)
    assert any("simulated point(s) give P50 only" in n for n in view.notes)


def test_at_p50_the_simulation_fills_in_and_says_so(full_db, catalog):
    view = explore(full_db, ViewState(pct="p50", target=100), catalog)
    gb = next(s for s in view.summaries if s.hardware == "gb300-nvl72")
    assert gb.simulated_only and gb.at_target.status == "ok"
    assert "simulated" in gb.target_provenance
    assert gb.peak == pytest.approx(933_333)          # the peak stays the data's
    sim = view.points[view.points.simulated & view.points.on_envelope]
    assert not sim.empty and set(sim.provenance) == {"simulated"}
