"""The database built on first run holds simulated envelopes, kept apart from the data."""
import pytest

from models import ViewState
from opx import store
from opx.simulate.builtin import SIMULATED_HARDWARE, SIMULATED_WORKLOADS
from opx.answers.explorer import explore


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
    # the default view (P90) now draws the simulated envelopes, labelled simulated, and says the
    # P90 is a modelled spread with its held-out error
    sim = view.points[view.points.simulated & view.points.on_envelope]
    assert not sim.empty and set(sim.provenance) == {"simulated"}
    assert set(sim.hardware) >= {"vr-nvl72", "gb300-nvl72"}
    note = next(n for n in view.notes if n.startswith("Simulated curves at P90"))
    assert "modelled spread" in note and "held-out error TPOT" in note and "%" in note
    assert not any("simulated point(s) have no" in n for n in view.notes)
    gb = next(s for s in view.summaries if s.hardware == "gb300-nvl72")
    assert gb.simulated_at_target is not None      # beside the data, never replacing it


def test_simulated_p90_is_at_or_below_p50_interactivity(full_db):
    with store.reading(full_db) as con:
        bad = con.execute(
            "SELECT count(*) FROM points p JOIN runs r ON r.id = p.run_id "
            "WHERE r.provenance = 'simulated' AND (p.tpot_p90_s IS NULL OR p.tpot_p90_s < p.tpot_p50_s "
            "OR p.ttft_p90_s < p.ttft_p50_s OR p.tpot_p99_s IS NOT NULL)").fetchone()[0]
    assert bad == 0


def test_at_p99_the_simulation_claims_nothing(full_db, catalog):
    view = explore(full_db, ViewState(pct="p99"), catalog)
    assert view.points.empty or not view.points.simulated.any()
    assert any("simulated point(s) have no P99" in n and "none is claimed" in n
               and "choose P90" in n for n in view.notes)


def test_at_p50_the_p90_figure_answers_and_the_projection_stands_beside(full_db, catalog):
    view = explore(full_db, ViewState(pct="p50", target=100), catalog)
    gb = next(s for s in view.summaries if s.hardware == "gb300-nvl72")
    # its P90 figure at 387 meets 100 at P50 too: data, before the projection
    assert not gb.simulated_only and gb.answer.how == "stricter" and gb.answer.value == 29_310
    assert gb.simulated_at_target.status == "ok"
    assert gb.peak == pytest.approx(933_333)          # the peak stays the data's
    sim = view.points[view.points.simulated & view.points.on_envelope]
    assert not sim.empty and set(sim.provenance) == {"simulated"}



def test_simulated_runs_are_undated_so_db_init_adds_nothing_on_another_day():
    """A run's date is part of its id: dated by the day `db init` ran, every built-in simulated
    run came back as a new run on the next day. Simulations are undated (docs/url-params.md)."""
    from opx.simulate.builtin import builtin_simulations
    runs, _ = builtin_simulations()
    assert runs and {r.date for r in runs} == {None}
