import os
import subprocess
import sys

from tests.conftest import ROOT


def opx(*args, env=None):
    return subprocess.run([sys.executable, "-m", "opx", *args], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=120)


def test_db_init_builds_and_is_idempotent(tmp_path):
    db = tmp_path / "x.duckdb"
    first = opx("db", "init", "--db", str(db))
    assert first.returncode == 0, first.stderr
    assert "0 already stored" in first.stdout
    second = opx("db", "init", "--db", str(db))
    assert "0 run(s) and 0 point(s) added" in second.stdout
    listing = opx("runs", "list", "--db", str(db))
    assert "vr-nvl72" in listing.stdout and "preview" in listing.stdout


def test_db_path_comes_from_the_environment(tmp_path):
    db = tmp_path / "env.duckdb"
    assert opx("db", "init", env={"OPX_DB": str(db)}).returncode == 0
    assert db.exists()


def test_missing_database_is_an_error_not_a_traceback(tmp_path):
    r = opx("runs", "list", "--db", str(tmp_path / "absent.duckdb"))
    assert r.returncode == 1
    assert r.stderr.startswith("error: ") and "db init" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "absent.duckdb").exists()


def test_deleting_an_unknown_run_names_the_id_and_changes_nothing(tmp_path):
    db = tmp_path / "x.duckdb"
    opx("db", "init", "--db", str(db))
    before = opx("runs", "list", "--db", str(db)).stdout
    r = opx("runs", "delete", "deadbeef", "--db", str(db))
    assert r.returncode == 1 and "deadbeef" in r.stderr and r.stderr.startswith("error: ")
    assert opx("runs", "list", "--db", str(db)).stdout == before
