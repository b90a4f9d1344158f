"""Work done when data changes (opx/store/envelopes.py, opx/store/stored_fits.py, opx/answers/precompute.py): what is
stored equals what a view would compute, after every kind of write, and a view reads it."""
from __future__ import annotations

import dataclasses
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from models import ViewState
from opx import store
from opx.answers import anchoring
from opx.store import envelopes
from opx.answers import explorer
from opx.answers import precompute
from opx.store import queries
from opx.store import stored_fits
from opx.ingest.builtin import builtin_runs
from opx.simulate import anchor as A

ROOT = Path(__file__).resolve().parents[2]


def _full_path(con, f: queries.Filters) -> pd.DataFrame:
    """chart_points as computed from every stored point (the stored envelopes hidden)."""
    stored = envelopes.stored
    envelopes.stored = lambda c: False
    try:
        return queries.chart_points(con, f)
    finally:
        envelopes.stored = stored


def _same(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    key = ["run_id", "seq"]
    return (list(a.columns) == list(b.columns)
            and a.sort_values(key).reset_index(drop=True).equals(
                b.sort_values(key).reset_index(drop=True)))


def _views(con):
    for m, w in con.execute("SELECT DISTINCT model, workload FROM runs ORDER BY 1, 2").fetchall():
        hw = tuple(r[0] for r in con.execute(
            "SELECT DISTINCT hardware FROM runs WHERE model = ? AND workload = ? ORDER BY 1",
            [m, w]).fetchall())
        for pct in ("mean", "p50", "p90", "p99"):
            for y in ("total", "output", "input"):
                yield queries.Filters(model=m, workload=w, hardware=hw, pct=pct, y=y)


def test_the_stored_envelope_is_the_computed_one_for_every_view(full_db):
    with store.reading(full_db) as con:
        views = list(_views(con))
        differ = [f for f in views if not _same(queries.chart_points(con, f), _full_path(con, f))]
    assert len(views) > 500
    assert not differ, differ[:3]


def _envelope_rows(con) -> list[tuple]:
    return con.execute("SELECT * FROM envelope_points ORDER BY ALL").fetchall()


def test_envelopes_kept_through_batches_deletes_and_reimports_equal_a_rebuild(tmp_path):
    runs = builtin_runs()
    rng = random.Random(7)
    rng.shuffle(runs)
    path = tmp_path / "opx.duckdb"
    with store.writing(path) as con:
        for i in range(0, len(runs), 97):            # batches, as an import writes them
            store.write_runs(con, runs[i:i + 97])
        store.write_runs(con, runs[:50])              # a re-import changes nothing
        on_envelope = [r[0] for r in con.execute(
            "SELECT DISTINCT run_id FROM envelope_points ORDER BY 1").fetchall()]
        off_envelope = [r[0] for r in con.execute(
            "SELECT id FROM runs WHERE id NOT IN (SELECT run_id FROM envelope_points) "
            "ORDER BY 1").fetchall()]
        for run_id in rng.sample(on_envelope, 6) + rng.sample(off_envelope, 3):
            assert store.delete_run(con, run_id)
        kept = _envelope_rows(con)
        envelopes.rebuild_all(con)
        assert _envelope_rows(con) == kept
        assert kept


def test_a_database_of_the_previous_schema_gets_its_envelopes_on_upgrade(seed_db, tmp_path):
    path = tmp_path / "old.duckdb"
    shutil.copy(seed_db, path)
    with store.writing(path) as con:
        expected = _envelope_rows(con)
    con = duckdb.connect(str(path))
    con.execute("DROP TABLE envelope_points")
    con.execute("DROP TABLE derived_fits")
    con.execute("DELETE FROM schema_migrations WHERE version >= 4")
    con.close()
    with pytest.raises(Exception, match="older than this build"):
        with store.reading(path):
            pass
    with store.writing(path) as con:
        assert _envelope_rows(con) == expected


def test_a_fit_reads_only_the_anchors_it_fits_and_they_are_the_same(full_db):
    with store.reading(full_db) as con:
        groups = con.execute("SELECT DISTINCT hardware, model, workload FROM runs "
                             "WHERE provenance <> 'simulated' ORDER BY 1, 2, 3").fetchall()
        checked = 0
        for hw, m, w in groups:
            for pct in ("mean", "p50", "p90", "p99"):
                f = queries.Filters(model=m, workload=w, hardware=(hw,), pct=pct, y="total")
                every = [a for a in A.anchors_from_points(queries.anchor_points(con, f),
                                                          prefer=pct) if a.fitted]
                few = A.anchors_from_points(queries.anchor_points(con, f, fitting=pct),
                                            prefer=pct)
                assert [a for a in few if a.fitted] == every, (hw, m, w, pct)
                assert all(a.fitted for a in few)
                checked += 1
    assert checked > 100


@pytest.fixture(scope="module")
def a_fit(full_db, catalog):
    view = explorer.explore(full_db, ViewState(), catalog)
    hw = next(h for h, a in view.anchoring.items() if a.anchored)
    data = explorer.fetch(full_db, ViewState(hw=(hw,)))
    anchors, knobs, budget = anchoring.fit_inputs(ViewState(hw=(hw,)), hw, data.anchors,
                                                  data.sim_params)
    f = anchoring.fitted(hw, "deepseek-v4.1-flash", "agentx", budget, knobs, catalog, anchors)
    return f, (hw, budget, knobs, anchors)


def test_a_stored_fit_reads_back_equal(a_fit):
    f, _ = a_fit
    back = stored_fits.decode(stored_fits.encode(f))
    assert back.summary() == f.summary()
    for attr in ("envelope", "envelope_p90"):
        pd.testing.assert_frame_equal(getattr(back.result, attr), getattr(f.result, attr))
    pd.testing.assert_frame_equal(back.result.points_frame(), f.result.points_frame())
    assert len(back.result.curves) == len(f.result.curves) > 1
    for mine, theirs in zip(back.result.curves, f.result.curves):
        pd.testing.assert_frame_equal(mine.points, theirs.points)
        assert (mine.layout, mine.deployment, mine.replicas) == (theirs.layout, theirs.deployment,
                                                                 theirs.replicas)
    assert back.anchors == f.anchors and back.result.knobs == f.result.knobs
    assert back.result.parameters == f.result.parameters


def test_a_payload_it_cannot_read_is_a_miss_not_an_error(tmp_path, seed_db):
    path = tmp_path / "opx.duckdb"
    shutil.copy(seed_db, path)
    bad = {"__class__": "Popen", "fields": {"args": ["touch", str(tmp_path / "ran")]}}
    with store.writing(path) as con:
        stored_fits.save(con, "k1", "h", "m", "w", b"not zlib")
        import zlib
        stored_fits.save(con, "k2", "h", "m", "w", zlib.compress(json.dumps(bad).encode()))
    with store.reading(path) as con:
        assert stored_fits.load(con, "k1") is None
        assert stored_fits.load(con, "k2") is None      # only a fit's own classes are built
        assert stored_fits.load(con, "absent") is None
    assert not (tmp_path / "ran").exists()


def test_the_key_changes_with_every_input_and_only_fitted_anchors_count(a_fit, catalog):
    _, (hw, budget, knobs, anchors) = a_fit
    base = stored_fits.key(hw, "deepseek-v4.1-flash", "agentx", budget, knobs, catalog, anchors)
    other_knobs = dataclasses.replace(knobs, mtp_acceptance=knobs.mtp_acceptance * 0.9)
    i = next(i for i, a in enumerate(anchors) if a.fitted and a.y is not None)
    moved = list(anchors)
    moved[i] = dataclasses.replace(anchors[i], y=anchors[i].y * 1.01)
    unfitted = list(anchors) + [A.Anchor("x", "x", "measured", "point", "p50", 1.0, 1.0, 0.1,
                                         fitted=False, reason="below the data's own frontier")]
    assert stored_fits.key(hw, "deepseek-v4.1-flash", "agentx", budget, other_knobs, catalog,
                           anchors) != base
    assert stored_fits.key(hw, "deepseek-v4.1-flash", "agentx", budget, knobs, catalog,
                           moved) != base
    assert stored_fits.key(hw, "deepseek-v4.1-flash", "agentx", budget, knobs, catalog,
                           unfitted) == base
    assert stored_fits.key(hw, "deepseek-v4.1-flash", "1k1k", budget, knobs, catalog,
                           anchors) != base


VIEW_WITHOUT_FITTING = """
import json, sys
from pathlib import Path
from opx.simulate import anchor
def refuse(*a, **k):
    raise AssertionError("a fit was made at view time")
anchor.fit = refuse
from models import ViewState
from opx.answers import explorer
from opx.catalog import load_catalog
v = explorer.explore(Path(sys.argv[1]), ViewState(pct=sys.argv[2]), load_catalog())
print(json.dumps({s.hardware: [s.answer.value, s.projection.value] for s in v.summaries}
                 | {"anchored": sorted(h for h, a in v.anchoring.items() if a.anchored)}))
"""


def test_after_a_write_the_default_views_read_their_fits_in_a_new_process(full_db, tmp_path,
                                                                        catalog):
    path = tmp_path / "opx.duckdb"
    shutil.copy(full_db, path)
    with store.writing(path) as con:
        con.execute("DELETE FROM derived_fits")
    lines: list[str] = []
    made = precompute.refresh(path, catalog, say=lines.append, workers=1)
    assert made >= 2 and lines[0].startswith("anchored projections: making")
    assert precompute.refresh(path, catalog) == 0          # nothing left to make
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for pct in ("p50", "p90"):
        done = subprocess.run([sys.executable, "-c", VIEW_WITHOUT_FITTING, str(path), pct],
                              cwd=ROOT, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]
        stored = json.loads(done.stdout)
        assert stored["anchored"], "the default view's simulated curves are anchored"
        computed = explorer.explore(full_db, ViewState(pct=pct), catalog)
        assert stored == ({s.hardware: [s.answer.value, s.projection.value]
                           for s in computed.summaries}
                          | {"anchored": sorted(h for h, a in computed.anchoring.items()
                                                if a.anchored)})


def _forget_fits() -> None:
    """This process's caches of fits and of views prepared with them."""
    anchoring._CACHE.clear()
    explorer._prepared_cached.cache_clear()


def test_a_fit_made_at_view_time_is_stored_for_everyone_unless_read_only(full_db, tmp_path,
                                                                       catalog, monkeypatch):
    path = tmp_path / "opx.duckdb"
    shutil.copy(full_db, path)
    with store.writing(path) as con:
        con.execute("DELETE FROM derived_fits")
    _forget_fits()
    monkeypatch.setenv("OPX_READ_ONLY", "1")
    explorer.explore(path, ViewState(), catalog)
    anchoring.wait_for_saves()
    with store.reading(path) as con:
        assert not stored_fits.keys(con)
    _forget_fits()
    monkeypatch.delenv("OPX_READ_ONLY")
    view = explorer.explore(path, ViewState(), catalog)
    anchoring.wait_for_saves()
    with store.reading(path) as con:
        assert len(stored_fits.keys(con)) == sum(a.anchored for a in view.anchoring.values())


def test_the_simulate_page_shares_the_explorers_fit(full_db, catalog):
    from opx.answers.simulation import session_start, simulate_view
    _forget_fits()
    explorer.explore(full_db, ViewState(), catalog)
    made = len(anchoring._CACHE)
    s = session_start(full_db, ViewState(), catalog)
    assert s.anchor
    simulate_view(full_db, s, catalog)
    assert len(anchoring._CACHE) == made      # the same fit, not another one


def test_deleting_an_anchor_from_the_cli_makes_the_new_fit_before_the_command_ends(full_db,
                                                                                   tmp_path):
    path = tmp_path / "opx.duckdb"
    shutil.copy(full_db, path)
    view = explorer.explore(path, ViewState(hw=("vr-nvl72",)), __import__(
        "opx.catalog", fromlist=["load_catalog"]).load_catalog())
    anchor = next(r["run_id"] for r in view.anchoring["vr-nvl72"].residuals if r["fitted"])
    with store.reading(path) as con:
        before = stored_fits.keys(con)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "opx", "runs", "delete", anchor, "--db",
                           str(path)], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "anchored projections: making" in done.stderr
    with store.reading(path) as con:
        after = stored_fits.keys(con)
    assert after - before, "a fit for the new anchors is stored"
    shown = subprocess.run([sys.executable, "-c", VIEW_WITHOUT_FITTING, str(path), "p90"],
                           cwd=ROOT, env=env, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "vr-nvl72" in json.loads(shown.stdout)["anchored"]
