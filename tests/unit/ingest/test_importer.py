"""Parsing in worker processes and writing in batches change nothing a user can see: they give
exactly the per-file outcome and the stored tables of parsing and writing one file at a time."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from opx import store

from opx.store import importer
from opx.store.importer import _parse_chunk
from opx.catalog import load_catalog
from opx.ingest.core import IngestOptions
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures"


def _vllm_result(i: int) -> dict:
    """A small vLLM result with --metadata; ten files (concurrencies) per configuration."""
    conc = 2 ** (i % 10)
    tpot = 8.0 + 0.05 * conc + i * 1e-3     # every file its own measurement
    return {"date": f"202601{1 + i // 200:02d}-101010", "backend": "vllm", "model_id": "org/m",
            "num_prompts": 4 * conc, "max_concurrency": conc, "request_rate": "inf",
            "completed": 4 * conc, "failed": 0, "total_input_tokens": 4 * conc * 1024,
            "total_output_tokens": 4 * conc * 1024, "output_throughput": 100.0 * conc,
            "total_token_throughput": 200.0 * conc, "median_ttft_ms": 40.0 + conc,
            "p90_ttft_ms": 50.0 + conc, "median_tpot_ms": tpot, "p90_tpot_ms": tpot * 1.1,
            "p99_tpot_ms": tpot * 1.3, "mean_tpot_ms": tpot,
            "hardware": ("h200", "b200")[(i // 10) % 2], "gpus": "8", "model": "deepseek-r1"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Every own fixture (good and bad, every format), twice (a copy adds nothing), and 600
    generated vLLM files, a few of them broken."""
    root = tmp_path_factory.mktemp("import-folder")
    shutil.copytree(FIXTURES, root / "fixtures")
    shutil.copytree(FIXTURES, root / "fixtures-again")
    gen = root / "generated"
    gen.mkdir()
    for i in range(600):
        result = _vllm_result(i)
        if i % 97 == 5:
            result["p90_tpot_ms"] = float("nan")          # refused: names the field
        if i % 131 == 7:
            del result["completed"]                        # refused: not a result
        (gen / f"r{i:04d}.json").write_text(json.dumps(result))
    return root


def _import(folder, db, **kwargs):
    with store.writing(db):
        pass
    results = importer.import_files([folder], IngestOptions(), db, load_catalog(), **kwargs)
    outcome = [(str(r.path.relative_to(folder)), r.format, r.error, r.runs_added, r.points_added,
                tuple(r.notices)) for r in results]
    with store.reading(db) as con:
        runs = con.execute("SELECT * EXCLUDE (ingested_at) FROM runs ORDER BY id").fetchall()
        points = con.execute("SELECT * FROM points ORDER BY run_id, seq").fetchall()
    return outcome, runs, points


def test_workers_and_batches_give_what_one_file_at_a_time_gives(folder, tmp_path, monkeypatch):
    serial = _import(folder, tmp_path / "serial.duckdb", workers=1)
    outcome = serial[0]
    assert sum(1 for o in outcome if o[2]) >= 10, "the folder should hold refused files"
    assert any("NaN" in (o[2] or "") for o in outcome)
    assert sum(o[3] for o in outcome) >= 15 and sum(o[4] for o in outcome) >= 580
    # The second copy of every fixture adds nothing.
    assert all(o[3] == o[4] == 0 for o in outcome if o[0].startswith("fixtures-again") and not o[2])

    parallel = _import(folder, tmp_path / "parallel.duckdb", workers=2)
    assert parallel == serial

    monkeypatch.setattr(importer, "BATCH_FILES", 7)
    monkeypatch.setattr(importer, "CHUNK_FILES", 13)
    small_batches = _import(folder, tmp_path / "batches.duckdb", workers=2)
    assert small_batches == serial


def test_a_large_import_uses_workers_and_a_small_one_does_not():
    assert importer._worker_count(10, None) == 1
    assert importer._worker_count(importer.PARALLEL_MIN_FILES - 1, None) == 1
    assert importer._worker_count(10_000, 1) == 1
    assert 1 <= importer._worker_count(10_000, None) <= importer.MAX_WORKERS


def _dies_on_the_third_chunk(paths):
    """A worker killed while it parses (as the kernel's OOM killer would)."""
    if any(p.endswith("r0450.json") for p in paths):
        os._exit(9)
    return _parse_chunk(paths)


def test_a_worker_that_dies_costs_nothing_but_time(folder, tmp_path, monkeypatch):
    serial = _import(folder, tmp_path / "serial.duckdb", workers=1)
    monkeypatch.setattr(importer, "_parse_chunk", _dies_on_the_third_chunk)
    survived = _import(folder, tmp_path / "survived.duckdb", workers=2)
    assert survived == serial


def _processes_naming(path) -> list[int]:
    """Live processes whose command line names `path` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except (OSError, IndexError):
            continue
        if entry.name.isdigit() and str(path) in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to list processes")
def test_workers_leave_with_a_killed_importer(tmp_path):
    """Workers wait for work from their importer; when it is killed they exit too, rather than
    wait forever."""
    folder = tmp_path / "files"
    folder.mkdir()
    for i in range(2000):
        (folder / f"r{i:04d}.json").write_text(json.dumps(_vllm_result(i)))
    cmd = [sys.executable, "-m", "opx", "ingest", str(folder), "--jobs", "2",
           "--db", str(tmp_path / "opx.duckdb")]
    importer_process = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while len(_processes_naming(folder)) < 3:        # the importer and its two workers
            assert importer_process.poll() is None, "the import ended before its workers were seen"
            assert time.monotonic() < deadline, "no workers started"
            time.sleep(0.02)
        importer_process.kill()
        importer_process.wait()
        deadline = time.monotonic() + 5
        while _processes_naming(folder) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _processes_naming(folder) == []
    finally:
        importer_process.kill()
        for pid in _processes_naming(folder):           # workers left behind by a failure
            os.kill(pid, signal.SIGKILL)
