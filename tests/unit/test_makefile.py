"""What `make run` and `make clean` would do to each kind of database (`make -n`: printed, not
run): a DuckDB file is built or brought up to date, a PostgreSQL store is initialised at each
start, a published Parquet dataset is served as it is and never removed."""
import os
import shutil
import subprocess
import time

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def planned(target: str, db: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OPX_DB"}
    return subprocess.run(["make", "-n", target, f"DB={db}"], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True).stdout


def test_a_duckdb_file_is_initialised_when_what_builds_it_is_newer(tmp_path):
    db = tmp_path / "opx.duckdb"
    assert "opx db init" in planned("run", str(db))                  # missing: built
    db.write_bytes(b"")
    newest = max((ROOT / "opx").rglob("*.py"), key=lambda p: p.stat().st_mtime)
    old = newest.stat().st_mtime - 60
    os.utime(db, (old, old))                                          # older than the code
    assert "opx db init" in planned("run", str(db))
    now = time.time() + 60
    os.utime(db, (now, now))                                          # newer than everything
    assert "opx db init" not in planned("run", str(db))
    assert f"rm -f '{db}'" in planned("clean", str(db))


def test_a_parquet_dataset_is_served_as_it_is_and_never_removed(tmp_path):
    dataset = tmp_path / "results-dataset"
    (dataset / "runs").mkdir(parents=True)
    for db in (str(dataset), f"{dataset}/*", "s3://bucket/results-dataset/"):
        run = planned("run", db)
        assert "opx db init" not in run and "-m opx serve" in run, db
        assert db not in planned("clean", db).replace(f"OPX_DB={db}", ""), db


def test_a_postgres_store_is_initialised_at_each_start_and_never_removed():
    url = "postgresql://opx@db.example:5432/opx"
    assert f"opx db init --db '{url}'" in planned("run", url)
    assert url not in planned("clean", url)
