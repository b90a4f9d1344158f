"""PostgreSQL as the shared store: what it must do beyond the contract both backends share
(tests/unit/test_store.py): every process's copy follows the writes of the others, the copy equals
a DuckDB file holding the same data, migrations run once, and a lost server is one clear line.
A throwaway cluster from Debian's package (deploy/pgcluster.py); skipped without it, required in CI.
"""
from __future__ import annotations

import duckdb
import pytest

from models import Deployment, Point, Run, ViewState
from opx import store
from opx.store import pgstore
from opx.store import saved_views
from opx.errors import StoreError
from tests.conftest import new_pg_database


def _run(hardware="h200", n_points=3, scale=1.0):
    return Run(hardware=hardware, model="deepseek-r1", workload="1k1k", provenance="measured",
               source="sweep.json", deployment=Deployment(gpus_total=8, tp=8),
               points=tuple(Point(concurrency=2 ** i, tpot_p50_s=0.01 * (i + 1) / scale,
                                  throughput_total_tok_s=1000.0 * (i + 1) * scale)
                            for i in range(n_points)))


def replica(url: str, name: str) -> str:
    """The same database under another URL: another process's copy, in this process."""
    return f"{url}?application_name={name}"


def _tables(db) -> dict[str, list[tuple]]:
    """Every stored table's rows, sorted, without the moment of writing."""
    with store.reading(db) as con:
        return {
            "runs": sorted(con.execute("SELECT * EXCLUDE (ingested_at) FROM runs").fetchall()),
            "points": sorted(con.execute("SELECT * FROM points").fetchall()),
            "envelope_points": sorted(con.execute("SELECT * FROM envelope_points").fetchall()),
            "saved_views": sorted(con.execute(
                "SELECT slug, title, page, query, run_ids FROM saved_views").fetchall()),
            "derived_fits": sorted(con.execute(
                "SELECT key, hardware, model, workload, engine, payload FROM derived_fits").fetchall()),
        }


def test_postgres_tables_have_the_columns_of_the_copy(pg_cluster):
    url = new_pg_database(pg_cluster)
    with store.writing(url):
        pass
    pg = pgstore.connect(url)
    cur = pg.cursor()
    copy = pgstore.mirror(url)
    for table in pgstore.TABLES:
        cur.execute("SELECT column_name FROM information_schema.columns WHERE table_name = $1 "
                    "ORDER BY ordinal_position", parameters=(table,))
        columns = [r[0] for r in cur.fetchall()]
        assert columns == copy.columns[table] + ["version"], table
    pg.close()


def test_a_write_on_one_replica_shows_on_another_at_its_next_read(pg_cluster):
    url = new_pg_database(pg_cluster)
    a, b = replica(url, "a"), replica(url, "b")
    with store.writing(a) as con:
        store.write_runs(con, [_run("h200")])
    stamp = store.data_stamp(b)
    with store.reading(b) as con:
        assert store.count_runs(con) == (1, 3)
    with store.writing(a) as con:
        store.write_runs(con, [_run("h100"), _run("h200", n_points=5)])   # a new run, 2 new points
    assert store.data_stamp(b) != stamp
    with store.reading(b) as con:
        assert store.count_runs(con) == (2, 8)
    with store.writing(b) as con:
        assert store.delete_run(con, _run("h100").run_key())
        view = saved_views.save(con, "Rubin at 500", "/", ViewState(target=500), [])
    with store.reading(a) as con:
        assert store.count_runs(con) == (1, 5)
        assert saved_views.get(con, view.slug).title == "Rubin at 500"
    with store.writing(a) as con:
        saved_views.rename(con, view.slug, "Renamed")
    with store.reading(b) as con:
        assert saved_views.get(con, view.slug).title == "Renamed"
    assert _tables(a) == _tables(b)


def test_the_copy_equals_a_file_with_the_same_writes(pg_cluster, tmp_path, full_db):
    """Runs, points, envelopes (kept by the writes), saved views and fits, after imports and a
    delete, read the same from Postgres through a fresh copy as from a DuckDB file."""
    url = new_pg_database(pg_cluster)
    file = tmp_path / "same.duckdb"
    with store.reading(full_db) as con:
        fits = con.execute("SELECT key, hardware, model, workload, payload FROM derived_fits").fetchall()
    from opx.store import stored_fits
    from opx.ingest.builtin import builtin_runs
    runs = builtin_runs()
    for db in (url, file):
        with store.writing(db) as con:
            store.write_runs(con, runs[:40])
        with store.writing(db) as con:
            store.write_runs(con, runs[20:] + [_run("h200"), _run("h200", scale=2.0)])
            for key, hw, model, workload, payload in fits:
                stored_fits.save(con, key, hw, model, workload, payload)
        with store.writing(db) as con:
            store.delete_run(con, runs[3].run_key())
            store.delete_run(con, _run("h200").run_key())
            saved_views.save(con, "A view", "/compare", ViewState(target=300), [runs[0].run_key()])
    fresh = replica(url, "fresh")
    assert _tables(fresh) == _tables(file)
    assert _tables(fresh)["envelope_points"]
    assert len(_tables(fresh)["derived_fits"]) == len(fits)


def test_a_failed_write_changes_nothing_in_postgres_nor_in_the_copy(pg_cluster):
    url = new_pg_database(pg_cluster)
    with store.writing(url) as con:
        store.write_runs(con, [_run("h100")])
    before = _tables(url)
    with pytest.raises(RuntimeError, match="stopped half-way"):
        with store.writing(url) as con:
            store.write_runs(con, [_run("h200")])
            raise RuntimeError("stopped half-way")
    assert _tables(url) == before
    assert _tables(replica(url, "other")) == before


def test_a_newer_schema_in_postgres_is_refused(pg_cluster):
    url = new_pg_database(pg_cluster)
    with store.writing(url):
        pass
    pg = pgstore.connect(url)
    pg.cursor().execute("INSERT INTO schema_migrations VALUES ($1, current_timestamp)",
                        parameters=(pgstore.SCHEMA_VERSION + 5,))
    pg.close()
    other = replica(url, "newer")
    for opener in (store.reading, store.writing):
        with pytest.raises(StoreError, match="newer than this build"):
            with opener(other):
                pass


def test_an_empty_database_says_how_to_build_it(pg_cluster):
    url = new_pg_database(pg_cluster)
    with pytest.raises(StoreError, match="db init"):
        with store.reading(url):
            pass


def test_writers_starting_at_once_migrate_once_and_store_each_run_once(pg_cluster):
    from concurrent.futures import ThreadPoolExecutor
    url = new_pg_database(pg_cluster)

    def write(i):
        db = replica(url, f"w{i}")
        with store.writing(db) as con:
            return store.write_runs(con, [_run("h200"), _run(f"b{200 + i}")]).runs_added

    with ThreadPoolExecutor(4) as pool:
        added = list(pool.map(write, range(4)))
    assert sum(added) == 5               # h200 once, and each writer's own run
    pg = pgstore.connect(url)
    cur = pg.cursor()
    cur.execute("SELECT version, count(*) FROM schema_migrations GROUP BY version")
    assert all(n == 1 for _, n in cur.fetchall())
    cur.execute("SELECT count(*), count(DISTINCT id) FROM runs")
    assert cur.fetchone() == (5, 5)
    pg.close()


def test_a_server_lost_mid_session_is_one_line_naming_it_and_the_next_read_recovers(tmp_path):
    from deploy.pgcluster import Cluster
    with Cluster() as cluster:
        url = cluster.url
        with store.writing(url) as con:
            store.write_runs(con, [_run()])
        with store.reading(url) as con:
            assert store.count_runs(con) == (1, 3)
        cluster.stop()
        for attempt in (lambda: store.data_stamp(url), lambda: store.reading(url).__enter__(),
                        lambda: store.writing(url).__enter__()):
            with pytest.raises(StoreError) as caught:
                attempt()
            text = str(caught.value)
            assert "\n" not in text
            assert f"the PostgreSQL server at {cluster.server} cannot be reached" in text
            assert "postgresql://postgres@127.0.0.1" in text
        cluster.start()
        with store.reading(url) as con:
            assert store.count_runs(con) == (1, 3)
        with store.writing(url) as con:
            store.write_runs(con, [_run("h100")])
        with store.reading(replica(url, "after")) as con:
            assert store.count_runs(con) == (2, 6)


def test_the_password_is_never_shown():
    err = pgstore.error("postgresql://me:s3cret@db.example:6543/opx",
                        Exception("IO: [libpq] Failed to connect: Connection refused"), False)
    assert "s3cret" not in str(err)
    assert str(err).startswith("postgresql://me@db.example:6543/opx: the PostgreSQL server at "
                               "db.example:6543 cannot be reached (connection refused)")


def test_a_url_folded_by_pathlib_is_mended():
    from pathlib import Path
    url = "postgresql://u@h:5/db"
    assert pgstore.url_of(Path(url)) == url
    assert pgstore.url_of("postgres://u@h/db") == "postgresql://u@h/db"
    assert pgstore.url_of("data/opx.duckdb") is None


def test_a_reader_sees_one_snapshot_while_a_write_lands(pg_cluster):
    url = new_pg_database(pg_cluster)
    with store.writing(url) as con:
        store.write_runs(con, [_run("h100")])
    with store.reading(url) as con:
        first = store.count_runs(con)
        with store.writing(replica(url, "writer")) as wcon:
            store.write_runs(wcon, [_run("h200")])
        pgstore.mirror(url).current()            # this process's copy moves on meanwhile
        assert store.count_runs(con) == first    # the open read still sees its snapshot
    with store.reading(url) as con:
        assert store.count_runs(con) == (2, 6)


def test_duckdb_sql_runs_unchanged_on_the_copy(seed_store):
    with store.reading(seed_store) as con:
        assert isinstance(con, duckdb.DuckDBPyConnection)
        assert con.execute("SELECT count(*) FROM point_metrics").fetchone()[0] > 0


def test_db_copy_moves_a_file_to_postgres_whole_and_refuses_a_full_one(pg_cluster, full_db,
                                                                        tmp_path):
    import subprocess
    import sys
    from tests.conftest import ROOT
    url = new_pg_database(pg_cluster)
    source = tmp_path / "team.duckdb"
    source.write_bytes(full_db.read_bytes())
    with store.writing(source) as con:
        saved_views.save(con, "Kept", "/", ViewState(target=250), [])
    cmd = [sys.executable, "-m", "opx", "db", "copy", str(source), "--db", url]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "1 saved view(s)" in done.stdout
    assert _tables(url) == _tables(source)
    again = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert again.returncode == 1
    assert again.stderr.startswith(f"error: {url}: database: is not empty")
    assert _tables(replica(url, "after")) == _tables(source)          # nothing changed
    to_file = subprocess.run([sys.executable, "-m", "opx", "db", "copy", str(source), "--db",
                              str(tmp_path / "other.duckdb")], cwd=ROOT, capture_output=True,
                             text=True, timeout=300)
    assert to_file.returncode == 1 and "writes to a PostgreSQL store" in to_file.stderr
    assert not (tmp_path / "other.duckdb").exists()


def test_a_copy_loaded_whole_equals_one_loaded_write_by_write(pg_cluster, full_db):
    """A new replica's whole load (points fetched in two halves over two connections in one
    snapshot) and a copy that followed every write hold the same rows."""
    url = new_pg_database(pg_cluster)
    with store.reading(full_db) as con:
        pgstore.copy_into(url, con)
    with store.writing(url) as con:
        store.write_runs(con, [_run("h200"), _run("h100", n_points=7)])
    follower = replica(url, "follower")
    before = _tables(follower)
    with store.writing(url) as con:
        store.delete_run(con, _run("h200").run_key())
    assert _tables(replica(url, "whole")) == _tables(follower) != before


def _cli(*args, timeout=300):
    import subprocess
    import sys
    from tests.conftest import ROOT
    return subprocess.run([sys.executable, "-m", "opx", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def test_an_import_says_the_same_on_both_backends(pg_cluster, seed_db, tmp_path):
    """Summaries, refusals, error lines and exit codes of `ingest` do not depend on the store."""
    from tests.conftest import ROOT
    url = new_pg_database(pg_cluster)
    file = tmp_path / "same.duckdb"
    file.write_bytes(seed_db.read_bytes())
    with store.reading(seed_db) as con:
        pgstore.copy_into(url, con)
    folder = tmp_path / "results"
    folder.mkdir()
    for fixture in sorted((ROOT / "tests" / "fixtures").rglob("*")):
        if fixture.is_file():
            (folder / f"{fixture.parent.name}-{fixture.name}").write_bytes(fixture.read_bytes())
    (folder / "broken.json").write_text('{"completed": 3')
    for args in (["--hardware", "h200", "--gpus", "8"], ["--hardware", "h200", "--gpus", "8"],
                 ["--dry-run"]):
        on_file, on_pg = _cli("ingest", folder, *args, "--db", file), _cli("ingest", folder, *args,
                                                                          "--db", url)
        assert on_pg.returncode == on_file.returncode
        assert on_pg.stdout.replace(url, "DB") == on_file.stdout.replace(str(file), "DB")
        assert on_pg.stderr.replace(url, "DB") == on_file.stderr.replace(str(file), "DB")
    pg_tables, file_tables = _tables(url), _tables(file)
    for table in ("runs", "points", "envelope_points", "saved_views"):
        assert pg_tables[table] == file_tables[table], table


@pytest.mark.parametrize("link", ["/?target=387", "/compare?a=vr-nvl72&b=gb300-nvl72",
                                  "/planner", "/latency", "/?y=usd_per_mtok&pct=p50"])
def test_a_link_exports_the_same_file_from_postgres_and_from_a_file(pg_cluster, full_db,
                                                                    tmp_path, link):
    from opx import cli
    url = _full_pg(pg_cluster, full_db)
    for fmt in ("json", "csv", "vl.json") + (("png",) if link in ("/?target=387", "/planner")
                                             else ()):
        a, b = tmp_path / f"pg.{fmt}", tmp_path / f"file.{fmt}"
        assert cli.main(["export", link, "--format", fmt, "-o", str(a), "--db", url]) == 0
        assert cli.main(["export", link, "--format", fmt, "-o", str(b), "--db", str(full_db)]) == 0
        assert a.read_bytes() == b.read_bytes(), (link, fmt)


_FULL: dict[str, str] = {}


def _full_pg(cluster, full_db) -> str:
    """The database `make run` builds, copied once per session into Postgres."""
    if "url" not in _FULL:
        _FULL["url"] = new_pg_database(cluster)
        with store.reading(full_db) as con:
            pgstore.copy_into(_FULL["url"], con)
    return _FULL["url"]


def test_the_cli_says_in_one_line_when_the_server_is_gone(tmp_path):
    from deploy.pgcluster import Cluster
    with Cluster() as cluster:
        url = cluster.url
        with store.writing(url) as con:
            store.write_runs(con, [_run()])
        cluster.stop()
        for args in (["runs", "list"], ["ingest", tmp_path], ["db", "init"],
                     ["export", "/", "--format", "json", "-o", tmp_path / "x.json"]):
            done = _cli(*args, "--db", url)
            assert done.returncode == 1, args
            assert done.stderr.count("\n") == 1, (args, done.stderr)
            assert done.stderr.startswith(f"error: {url}: the PostgreSQL server at "
                                          f"{cluster.server} cannot be reached"), done.stderr
        assert not (tmp_path / "x.json").exists()


def test_a_writer_waits_a_bounded_time_for_another_and_says_so(pg_cluster, monkeypatch):
    url = new_pg_database(pg_cluster)
    with store.writing(url) as con:
        store.write_runs(con, [_run("h100")])
    holder = pgstore.connect(url)
    cur = holder.cursor()
    cur.execute("BEGIN")
    cur.execute("SELECT pg_advisory_xact_lock($1)", parameters=(pgstore.WRITE_LOCK,))
    monkeypatch.setattr(pgstore, "WRITE_WAIT_S", 1)
    try:
        with pytest.raises(StoreError, match="is busy: another write has held it for over 1 s"):
            with store.writing(replica(url, "waiting")) as con:
                store.write_runs(con, [_run("h200")])
    finally:
        cur.execute("ROLLBACK")
        holder.close()
    with store.reading(replica(url, "after")) as con:
        assert store.count_runs(con) == (1, 3)


def test_a_write_that_bypasses_the_journal_is_refused(pg_cluster):
    url = new_pg_database(pg_cluster)
    with pytest.raises(AssertionError, match="without telling opx.store.journal"):
        with store.writing(url) as con:
            con.execute("UPDATE data_version SET version = version + 1")
    with store.reading(replica(url, "after")) as con:
        assert store.data_version(con) == 0


def test_a_fit_one_replica_makes_at_view_time_a_new_replica_reads_without_fitting(
        pg_cluster, full_db, tmp_path, catalog):
    import json
    import os
    import subprocess
    import sys
    from opx.answers import anchoring
    from opx.answers import explorer
    from tests.conftest import ROOT
    from tests.unit.test_derived import VIEW_WITHOUT_FITTING, _forget_fits
    file = tmp_path / "no-fits.duckdb"
    file.write_bytes(full_db.read_bytes())
    with store.writing(file) as con:
        con.execute("DELETE FROM derived_fits")
    url = new_pg_database(pg_cluster)
    with store.reading(file) as con:
        pgstore.copy_into(url, con)
    _forget_fits()
    made = explorer.explore(replica(url, "a"), ViewState(), catalog)      # fits, then stores
    anchoring.wait_for_saves()
    assert any(a.anchored for a in made.anchoring.values())
    pct = ViewState().pct
    done = subprocess.run([sys.executable, "-c", VIEW_WITHOUT_FITTING, replica(url, "b"), pct],
                          cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    computed = explorer.explore(full_db, ViewState(), catalog)
    assert json.loads(done.stdout) == (
        {s.hardware: [s.answer.value, s.projection.value] for s in computed.summaries}
        | {"anchored": sorted(h for h, a in computed.anchoring.items() if a.anchored)})


def test_a_delete_that_bypasses_the_journal_is_refused(pg_cluster):
    url = new_pg_database(pg_cluster)
    with store.writing(url) as con:
        store.write_runs(con, [_run("h100")])
    with pytest.raises(AssertionError, match="without telling opx.store.journal"):
        with store.writing(url) as con:
            con.execute("DELETE FROM points")
    with store.reading(url) as con:
        assert store.count_runs(con) == (1, 3)


def test_a_read_never_sees_a_write_postgres_has_not_committed(pg_cluster):
    """A write runs on the copy before Postgres commits it: a read in another thread meanwhile
    waits for it (or sees the data before it), never the half-done write, and after a failed
    write sees only what Postgres holds."""
    import threading
    url = new_pg_database(pg_cluster)
    with store.writing(url) as con:
        store.write_runs(con, [_run("h100")])
    for fails in (False, True):
        written, release = threading.Event(), threading.Event()
        seen: list = []

        def write():
            try:
                with store.writing(url) as con:
                    store.write_runs(con, [_run("b200" if fails else "h200")])
                    written.set()
                    release.wait(30)
                    if fails:
                        raise RuntimeError("lost half-way")
            except RuntimeError:
                pass

        def read():
            with store.reading(url) as con:
                seen.append(store.count_runs(con))

        writer = threading.Thread(target=write)
        writer.start()
        assert written.wait(30)
        reader = threading.Thread(target=read)
        reader.start()
        reader.join(1.0)
        assert not seen, "a read saw the copy while the write was not committed"
        release.set()
        writer.join(30)
        reader.join(30)
        assert seen == [(2, 6)]            # h200 added by the first write; b200's failed


def test_a_read_in_progress_survives_a_failed_write_dropping_the_copy(pg_cluster):
    url = new_pg_database(pg_cluster)
    with store.writing(url) as con:
        store.write_runs(con, [_run("h100")])
    with store.reading(url) as reader:
        with pytest.raises(RuntimeError):
            with store.writing(url) as con:
                store.write_runs(con, [_run("h200")])
                raise RuntimeError("lost half-way")
        assert store.count_runs(reader) == (1, 3)          # its cursor still works
    with store.reading(url) as con:
        assert store.count_runs(con) == (1, 3)


def test_a_unix_socket_url_works_from_the_environment_and_the_cli(pg_cluster, monkeypatch):
    from opx.config import db_path
    url = new_pg_database(pg_cluster)
    name = url.rsplit("/", 1)[1]
    socket_url = f"postgresql:///{name}?host={pg_cluster.root}&port={pg_cluster.port}&user=postgres"
    monkeypatch.setenv("OPX_DB", socket_url)
    assert str(db_path()) == socket_url
    with store.writing(db_path()) as con:
        store.write_runs(con, [_run("h100")])
    done = _cli("runs", "list", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert '"hardware": "h100"' in done.stdout
    with store.reading(url) as con:                         # the same database over TCP
        assert store.count_runs(con) == (1, 3)


def test_a_database_built_again_at_the_same_url_is_loaded_again_whole(pg_cluster):
    url = new_pg_database(pg_cluster)
    name = url.rsplit("/", 1)[1]
    with store.writing(url) as con:
        store.write_runs(con, [_run("h100"), _run("h200")])
    follower = replica(url, "follower")
    with store.reading(follower) as con:
        assert store.count_runs(con) == (2, 6)
    pg_cluster.psql(f"DROP DATABASE {name} WITH (FORCE)")
    pg_cluster.psql(f"CREATE DATABASE {name}")
    with store.writing(replica(url, "builder")) as con:      # the same version, another epoch
        store.write_runs(con, [_run("b200", n_points=2)])
    with store.reading(follower) as con:
        assert con.execute("SELECT hardware FROM runs").fetchall() == [("b200",)]


def test_the_first_read_after_a_server_restart_works(tmp_path):
    from deploy.pgcluster import Cluster
    with Cluster() as cluster:
        with store.writing(cluster.url) as con:
            store.write_runs(con, [_run()])
        assert store.data_stamp(cluster.url)
        cluster.stop()
        cluster.start()
        stamp = store.data_stamp(cluster.url)               # the kept connection is replaced
        with store.reading(cluster.url) as con:
            assert store.count_runs(con) == (1, 3)
        assert store.data_stamp(cluster.url) == stamp


def test_text_with_a_nul_is_refused_the_same_on_both_backends(empty_store, tmp_path):
    import json
    from tests.conftest import ROOT
    result = json.loads((ROOT / "tests" / "fixtures" / "vllm" / "metadata.json").read_text())
    result["label"] = "dsr1\u0000fp4"
    path = tmp_path / "nul.json"
    path.write_text(json.dumps(result))
    done = _cli("ingest", path, "--db", empty_store)
    assert done.returncode == 1
    assert "label: holds a NUL character (at character 5)" in done.stdout + done.stderr


def test_the_removal_log_is_pruned_and_a_copy_behind_it_loads_whole(pg_cluster, monkeypatch):
    """`removed_keys` keeps the last REMOVED_KEYS_KEPT versions' keys; a copy older than that
    cannot replay a removal from the log, so it loads whole and still drops the deleted run."""
    monkeypatch.setattr(pgstore, "REMOVED_KEYS_KEPT", 2)
    url = new_pg_database(pg_cluster)
    with store.writing(url) as con:
        store.write_runs(con, [_run("h200"), _run("h100")])
    follower = replica(url, "behind")
    with store.reading(follower) as con:
        assert store.count_runs(con) == (2, 6)
    with store.writing(url) as con:
        assert store.delete_run(con, _run("h100").run_key())
    for i in range(3):                       # three more writes: the delete's keys are pruned
        with store.writing(url) as con:
            saved_views.save(con, f"view {i}", "/", ViewState(target=100 + i), [])
    pg = pgstore.connect(url)
    cur = pg.cursor()
    cur.execute("SELECT version, removed_floor FROM data_version")
    version, floor = cur.fetchone()
    cur.execute("SELECT min(version) FROM removed_keys")
    oldest = cur.fetchone()[0]
    pg.close()
    assert floor == version - 2 and (oldest is None or oldest > floor)
    with store.reading(follower) as con:
        assert store.count_runs(con) == (1, 3)
    assert _tables(follower) == _tables(replica(url, "fresh"))


def test_the_command_line_starts_from_the_copy_it_saved_and_catches_up(pg_cluster, tmp_path,
                                                                       monkeypatch):
    """`runs list` on PostgreSQL keeps its copy in a file (opx.store.pg_local_copy); the next
    command opens it and loads only what changed, a removal included, and says the same as a
    command with no saved copy; one another command has open is left to it. A database built
    again at the address is never mixed with a saved copy of the old one, and an unreadable
    file is replaced."""
    from opx.store import pg_local_copy
    monkeypatch.setenv(pg_local_copy.CACHE_ENV, str(tmp_path / "cache"))
    url = new_pg_database(pg_cluster)
    with store.writing(url) as con:
        store.write_runs(con, [_run("h200"), _run("h100")])
    saved = pg_local_copy.path_for(pgstore.shown_url(url))

    def runs_list(cache=None):
        env_cache = str(cache or tmp_path / "cache")
        import os
        import subprocess
        import sys
        from tests.conftest import ROOT
        done = subprocess.run([sys.executable, "-m", "opx", "runs", "list", "--db", url],
                              cwd=ROOT, capture_output=True, text=True, timeout=300,
                              env={**os.environ, pg_local_copy.CACHE_ENV: env_cache})
        assert done.returncode == 0, done.stderr
        return done.stdout

    first = runs_list()
    assert saved.is_file() and "h100" in first and "h200" in first
    assert oct(saved.stat().st_mode & 0o777) == "0o600"
    with store.writing(url) as con:              # another host: a run added, one deleted
        store.delete_run(con, _run("h100").run_key())
        store.write_runs(con, [_run("b200")])
    caught_up = runs_list()
    assert "h100" not in caught_up and "b200" in caught_up
    assert caught_up == runs_list(cache=tmp_path / "none")
    # in this process: the saved copy is what a new copy starts from, at the saved version
    monkeypatch.setattr(pgstore, "_keep_local", True)
    fresh = pgstore.Mirror(url)
    fresh.current()
    assert fresh.saved_version == fresh.copy.version and fresh.copy.con is fresh.in_place
    # while it is open the file says no version: a command that died would leave it unused
    assert runs_list() == caught_up
    fresh.save_local_copy()                      # at exit: consistent again, and closed
    assert fresh.in_place is None and runs_list() == caught_up
    # the database built again at the address: another epoch, so the file is not used
    pg = pgstore.connect(url)
    cur = pg.cursor()
    cur.execute("UPDATE data_version SET epoch = md5(random()::text)")
    pg.commit()
    pg.close()
    rebuilt = pgstore.Mirror(url)
    rebuilt.current()
    assert rebuilt.saved_version is None
    saved.write_bytes(b"not a database")
    assert runs_list() == caught_up and saved.read_bytes()[:4] != b"not "
    # a command that died with the file open (its version row deleted) leaves it unused
    dying = pgstore.Mirror(url)
    dying.current()
    assert dying.in_place is not None
    dying.in_place.close()
    with store.writing(url) as con:
        store.write_runs(con, [_run("h100", n_points=2)])
    after = runs_list()
    assert "h100" in after and after == runs_list(cache=tmp_path / "none2")
