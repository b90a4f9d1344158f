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


FIX = ROOT / "tests" / "fixtures" / "opx-csv"


def test_ingest_prints_a_table_and_fails_when_any_file_failed(tmp_path):
    db = tmp_path / "x.duckdb"
    bad = tmp_path / "bad.json"
    bad.write_text('{"completed": ')
    r = opx("ingest", str(FIX / "h200-sweep-part1.csv"), str(bad), "--db", str(db))
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["file", "format", "result"]
    assert any("h200-sweep-part1.csv" in l and "opx-csv" in l and "1 run(s), 2 point(s) added" in l
               for l in lines)
    assert f"error: {bad}: " in r.stderr
    ok = opx("ingest", str(FIX / "h200-sweep-part2.csv"), "--db", str(db))
    assert ok.returncode == 0 and "0 run(s), 2 point(s) added" in ok.stdout


def test_ingest_dry_run_and_flags(tmp_path):
    db = tmp_path / "x.duckdb"
    r = opx("ingest", str(FIX / "no-gpus.csv"), "--db", str(db))
    assert r.returncode == 1 and "--gpus" in r.stderr and "--meta gpus=" in r.stderr
    r = opx("ingest", str(FIX / "no-gpus.csv"), "--gpus", "8", "--dry-run", "--db", str(db))
    assert r.returncode == 0 and "would be added" in r.stdout
    assert not db.exists()
    r = opx("ingest", str(FIX / "no-gpus.csv"), "--meta", "gpus=8", "--meta", "image=x",
            "--db", str(db))
    assert r.returncode == 0, r.stderr
    r = opx("ingest", str(FIX), "--gpus", "0", "--db", str(db))
    assert r.returncode == 2 and "positive" in r.stderr


def test_runs_show_as_json_uses_the_canonical_fields(tmp_path):
    import json
    db = tmp_path / "x.duckdb"
    opx("ingest", str(FIX / "h200-sweep-part1.csv"), "--db", str(db))
    run_id = opx("runs", "list", "--db", str(db)).stdout.splitlines()[1].split()[0]
    shown = json.loads(opx("runs", "show", run_id, "--format", "json", "--db", str(db)).stdout)
    assert shown["id"] == run_id and shown["hardware"] == "h200" and shown["gpus_total"] == 8
    first = shown["points"][0]
    assert first["interactivity_p90"] == 80 and first["throughput_total_per_gpu"] == 900
    assert first["tpot_p50_s"] == 0.0111 and first["interactivity_p99"] is None
    table = opx("runs", "show", run_id, "--db", str(db))
    assert "hardware: h200" in table.stdout
    missing = opx("runs", "show", "nope", "--db", str(db))
    assert missing.returncode == 1 and missing.stderr == "error: nope: no run with this id\n"


def test_a_reader_that_stops_early_gets_no_traceback(full_db):
    """`python -m opx runs list | head -1`: the pipe closes under the CLI; it ends quietly."""
    proc = subprocess.Popen([sys.executable, "-m", "opx", "runs", "list", "--db", str(full_db)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(100)
    proc.stdout.close()                     # as `head` does once it has its lines
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr
