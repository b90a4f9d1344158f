import duckdb
import pytest

from models import Deployment, Point, Run
from opx import store
from opx.store import schema
from opx.ingest.builtin import builtin_runs
from opx.errors import StoreError


def _run(n_points=3, hardware="h200"):
    return Run(hardware=hardware, model="deepseek-r1", workload="1k1k", provenance="measured",
               source="sweep.json", deployment=Deployment(gpus_total=8, tp=8),
               points=tuple(Point(concurrency=2 ** i, tpot_p50_s=0.01 * (i + 1),
                                  throughput_total_tok_s=1000.0 * (i + 1))
                            for i in range(n_points)))


def test_migrations_create_the_schema_once(empty_store):
    db = empty_store
    with store.writing(db) as con:
        assert schema.schema_version(con) == store.SCHEMA_VERSION
    with store.writing(db) as con:   # re-opening applies nothing twice
        rows = con.execute("SELECT count(*) FROM schema_migrations").fetchone()[0]
        assert rows == len(schema.migrations())


def test_reimport_changes_nothing(empty_store):
    db = empty_store
    with store.writing(db) as con:
        first = store.write_runs(con, [_run()])
        version = store.data_version(con)
        again = store.write_runs(con, [_run()])
        assert (first.runs_added, first.points_added) == (1, 3)
        assert (again.runs_added, again.points_added, again.runs_unchanged) == (0, 0, 1)
        assert store.data_version(con) == version
        assert store.count_runs(con) == (1, 3)


def test_per_gpu_figures_divide_by_all_gpus(empty_store):
    db = empty_store
    run = Run(hardware="gb200-nvl72", model="deepseek-r1", workload="2k2k", provenance="published",
              source="post", deployment=Deployment(gpus_total=16, gpus_prefill=8, gpus_decode=8),
              points=(Point(throughput_output_tok_s=80800.0, tpot_p90_s=0.05),))
    with store.writing(db) as con:
        store.write_runs(con, [run])
    with store.reading(db) as con:
        row = con.execute("SELECT throughput_output_per_gpu, interactivity_p90 "
                          "FROM point_metrics").fetchone()
    assert row[0] == pytest.approx(5050.0)
    assert row[1] == pytest.approx(20.0)


def test_a_failed_write_leaves_nothing_behind(tmp_path):
    db = tmp_path / "a.duckdb"
    with store.writing(db) as con:
        store.write_runs(con, [_run(hardware="h100")])
        con.execute("ALTER TABLE points ADD COLUMN must_not_be_null INTEGER")
        con.execute("UPDATE points SET must_not_be_null = 1")
        con.execute("ALTER TABLE points ALTER COLUMN must_not_be_null SET NOT NULL")
        with pytest.raises(duckdb.Error):
            store.write_runs(con, [_run()])
        assert store.count_runs(con) == (1, 3)


def test_a_newer_database_is_refused_with_a_clear_message(tmp_path):
    db = tmp_path / "new.duckdb"
    with store.writing(db) as con:
        con.execute("INSERT INTO schema_migrations VALUES (?, current_timestamp)",
                    [store.SCHEMA_VERSION + 5])
    for opener in (store.reading, store.writing):
        with pytest.raises(StoreError, match="newer than this build"):
            with opener(db):
                pass


def test_reading_a_missing_database_says_how_to_build_it(tmp_path):
    with pytest.raises(StoreError, match="db init"):
        with store.reading(tmp_path / "none.duckdb"):
            pass
    assert not (tmp_path / "none.duckdb").exists()


def test_threads_each_get_their_own_connection(seed_store):
    seed_db = seed_store
    from concurrent.futures import ThreadPoolExecutor

    def count(_):
        with store.reading(seed_db) as con:
            return store.count_runs(con)

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(count, range(32)))
    assert len(set(results)) == 1


def test_delete_run(empty_store):
    db = empty_store
    with store.writing(db) as con:
        store.write_runs(con, [_run()])
        run_id = _run().run_key()
        assert store.delete_run(con, run_id)
        assert store.count_runs(con) == (0, 0)
        assert not store.delete_run(con, run_id)


def test_builtin_data_loads_every_published_figure(seed_store):
    seed_db = seed_store
    import csv
    from opx.config import PUBLISHED_DIR
    from opx.ingest.builtin import INFERENCEX_SOURCE
    rows = list(csv.DictReader((PUBLISHED_DIR / "points.csv").open()))
    with store.reading(seed_db) as con:
        runs, points = con.execute(
            "SELECT count(DISTINCT r.id), count(*) FROM runs r JOIN points p ON p.run_id = r.id "
            "WHERE r.source <> ?", [INFERENCEX_SOURCE]).fetchone()
        assert store.count_runs(con)[0] == len(builtin_runs())
    assert runs == len({r["run"] for r in rows})
    assert points == len({(r["run"], r["point"]) for r in rows})


@pytest.mark.parametrize("url", ["mysql://me@db/opx", "sqlite:///tmp/opx.db"])
def test_a_url_of_a_store_opx_does_not_know_is_refused_and_nothing_is_made(tmp_path, monkeypatch,
                                                                          url):
    from pathlib import Path
    monkeypatch.chdir(tmp_path)
    for opener in (store.reading, store.writing):
        with pytest.raises(StoreError, match="is not a store opx knows"):
            with opener(Path(url)):
                pass
    assert list(tmp_path.iterdir()) == []


def test_the_data_stamp_survives_a_wal_checkpointed_away_while_it_looks(tmp_path, monkeypatch):
    """A writer's checkpoint can remove the .wal between a reader's two looks at it: the view
    (which keys its caches on the stamp) must not fail (seen once in the concurrent-import
    test: FileNotFoundError from data_stamp)."""
    import pathlib
    db = tmp_path / "opx.duckdb"
    db.write_bytes(b"x")
    wal = pathlib.Path(str(db) + ".wal")
    wal.write_bytes(b"y")
    real = pathlib.Path.stat
    looks = {"n": 0}

    def stat(self, *a, **k):
        if str(self) == str(wal):
            looks["n"] += 1
            if looks["n"] > 1:               # there at the first look, gone at the next
                raise FileNotFoundError(2, "No such file or directory", str(self))
        return real(self, *a, **k)
    monkeypatch.setattr(pathlib.Path, "stat", stat)
    assert store.data_stamp(db)[1] == 1
    # gone from the start: the database file's own stamp
    looks["n"] = 1
    assert store.data_stamp(db) == (real(db).st_mtime_ns, 1)
