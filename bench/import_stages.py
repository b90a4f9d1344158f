"""Where an import's CPU goes, stage by stage, each as a multiple of `json.load` of the same files.

    .venv/bin/python bench/import_stages.py [--files N] [--rounds R]

A diagnostic for docs/performance.md, not one of `make bench`'s figures. CPU time
(`time.process_time`) of one process, so another process's load on the machine counts less than
in wall time; each stage's fastest of R rounds (5 by default), interleaved with `json.load` rounds,
on N of bench/vllm_files.py's files (10,000 by default, as `bench_import.py`, so the write's fixed
costs spread over as many files). Each stage is timed on the previous stage's output, so they add
up to what one worker does per file; the write is timed apart, two batches into a fresh database
as the importer writes them (opening, planning, inserting, committing, closing)."""
from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import arg_int

from opx import store
from opx.catalog import load_catalog
from opx.ingest.core import IngestOptions, build_runs, detect, formats, read_text

import vllm_files
from bench_import import json_load_all


def fastest(rounds: int, work: Callable[[], object], reference: Callable[[], object]
            ) -> tuple[float, float]:
    """(work's fastest CPU seconds, reference's fastest), rounds interleaved."""
    best_work = best_reference = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        reference()
        best_reference = min(best_reference, time.process_time() - start)
        start = time.process_time()
        work()
        best_work = min(best_work, time.process_time() - start)
    return best_work, best_reference


def main(argv: list[str]) -> None:
    n = arg_int(argv, "--files", 10_000)
    rounds = arg_int(argv, "--rounds", 5)
    catalog, options = load_catalog(), IngestOptions()
    formats()
    with tempfile.TemporaryDirectory(prefix="opx-bench-stages-") as tmp:
        vllm_files.write_files(Path(tmp) / "results", n)
        files = sorted(Path(tmp, "results").rglob("*.json"))

        def read_all() -> list:
            return [read_text(f) for f in files]

        texts = read_all()

        def parse_all() -> list:
            return [detect(f, text).parse(f, text) for f, (text, _) in zip(files, texts)]

        records = parse_all()

        def build_all() -> list:
            return [build_runs(str(f), r, options, catalog, f"{f.name} (sha256 {sha})", [])
                    for f, r, (_, sha) in zip(files, records, texts)]

        runs = build_all()

        def rows_all() -> list:
            return [store.rows_of(run) for rs in runs for run in rs]

        rows = rows_all()
        stages = [
            ("read, sha256, UTF-8 decode (opx.ingest.core.read_text)", read_all),
            ("detect and parse: the sniffers, vLLM's parser", parse_all),
            ("runs: run facts, catalog, pydantic (build_runs)", build_all),
            ("rows: run ids, point keys (store.rows_of)", rows_all),
        ]

        def write() -> None:
            db = Path(tempfile.mkdtemp(dir=tmp)) / "opx.duckdb"
            with store.writing(db):
                pass
            half = len(rows) // 2
            for batch in (rows[:half], rows[half:]):
                with store.writing(db) as con:
                    store.write_runs(con, batch)

        print(f"{n} files, CPU time per file, fastest of {rounds} rounds")
        timed = []
        for name, work in stages + [("write: two batches into a fresh database", write)]:
            timed.append((name, *fastest(rounds, work, lambda: json_load_all(files))))
        # One reference for every stage, json.load's fastest round of all: the machine's speed
        # drifts from one stage to the next, and the stages should add up.
        json_s = min(reference for _, _, reference in timed)
        print(f"  json.load: {json_s / n * 1e6:.1f} µs a file (fastest of {rounds * len(timed)} rounds)")
        for name, work_s, _ in timed:
            print(f"  {name:62s} {work_s / n * 1e6:6.1f} µs  {work_s / json_s:5.2f} x json.load")
        print(f"  {'in all':62s} {sum(w for _, w, _ in timed) / n * 1e6:6.1f} µs  "
              f"{sum(w for _, w, _ in timed) / json_s:5.2f} x json.load")


if __name__ == "__main__":
    main(sys.argv[1:])
