"""The importer's fast paths change nothing a user can see: parsing in worker processes and
writing in batches give exactly the per-file outcome and the stored tables of parsing and writing
one file at a time."""
import json
import os
import shutil

import pytest

from opx import importer, store
from opx.importer import _parse_chunk
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


def _forget_what_parsing_remembers():
    from models import run as run_model
    from opx.ingest import core, vllm
    core._TEMPLATES.clear()
    vllm._USER_FACTS.clear()
    run_model._RUN_KEYS.clear()


def test_what_parsing_remembers_across_files_changes_no_outcome(folder):
    """Files of one configuration reuse its worked-out facts and validated run; each file parsed
    from a fresh start must give the same runs, rows, notices and errors."""
    from pathlib import Path
    from opx.ingest.core import collect_files, parse_files
    files, _ = collect_files([folder])
    catalog, options = load_catalog(), IngestOptions()
    _forget_what_parsing_remembers()
    together = parse_files(files, options, catalog)
    for path, warm in zip(files, together):
        _forget_what_parsing_remembers()
        (alone,) = parse_files([Path(path)], options, catalog)
        assert (alone.format, alone.error, alone.notices) == (warm.format, warm.error, warm.notices)
        assert [r.model_dump() for r in alone.runs] == [r.model_dump() for r in warm.runs]
        assert importer.rows_of(alone) == importer.rows_of(warm)


def test_an_import_leaves_no_cycles_for_the_paused_collector(folder, tmp_path):
    """The importer pauses Python's cycle collector while it runs (opx.ingest.core.gc_paused):
    that holds no memory only while an import, refused files and all, makes no reference cycles."""
    import gc
    from opx.ingest.core import gc_paused
    db = tmp_path / "cycles.duckdb"
    with store.writing(db):
        pass
    catalog = load_catalog()
    gc.collect()
    with gc_paused():
        results = importer.import_files([folder], IngestOptions(), db, catalog, workers=1)
        assert any(r.error for r in results) and any(r.runs_added for r in results)
        del results
        assert not gc.isenabled()
        leftover = gc.collect()
    assert gc.isenabled()
    assert leftover == 0
