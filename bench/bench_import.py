"""Import speed: files per second importing a folder of 10,000 vLLM result files, against merely
`json.load`-ing the same files, in one run.

    .venv/bin/python bench/bench_import.py [--files N] [--rounds R] [--profile] [--json FILE]

The files (bench/vllm_files.py) are shaped like the vLLM fixtures in ../shared/fixtures/vllm and
carry `--metadata hardware=... gpus=... model=...`, so they import without flags. The import is
`opx.importer.import_files` on the folder (finding the files, detecting, parsing, validating,
writing, with worker processes as `ingest` uses by default) into a fresh database; module
imports and the catalog are loaded before the clock starts. Each of R rounds (3 by default) times
a `json.load` pass and then an import into a new database; each side's best round counts.
A second import of the same folder must add nothing. `--profile` prints a pyinstrument profile of
the importing process, not its workers (pip install pyinstrument).
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from _common import Figure, Timer, arg_int, emit

import pandas  # noqa: F401  (DuckDB loads it on the first Arrow insert: loaded before the clock like every module)

from opx import store
from opx.catalog import load_catalog
from opx.importer import import_files
from opx.ingest.core import IngestOptions, formats

import vllm_files

TARGET = 0.5        # import at least half as fast as json.load


def json_load_seconds(files: list[Path]) -> float:
    with Timer() as t:
        for f in files:
            with open(f, encoding="utf-8") as fh:
                json.load(fh)
    return t.seconds


def main(argv: list[str]) -> list[Figure]:
    n = arg_int(argv, "--files", 10_000)
    rounds = arg_int(argv, "--rounds", 3)
    catalog = load_catalog()
    formats()                                      # the format modules, like every module
    json_passes: list[float] = []
    import_passes: list[float] = []
    with tempfile.TemporaryDirectory(prefix="opx-bench-import-") as tmp:
        folder = Path(tmp) / "results"
        files = vllm_files.write_files(folder, n)
        profiler = None
        # Interleaved rounds, the best of each side: the machine's speed drifts by up to 2x from
        # one second to the next, and both sides get the same chances.
        for i in range(rounds):
            db = Path(tmp) / f"opx-{i}.duckdb"
            with store.writing(db):
                pass                               # an empty, current database
            json_passes.append(json_load_seconds(files))
            if "--profile" in argv and i == 0:
                from pyinstrument import Profiler
                profiler = Profiler()
                profiler.start()
            with Timer() as t:
                results = import_files([folder], IngestOptions(), db, catalog)
            if profiler and i == 0:
                profiler.stop()
            import_passes.append(t.seconds)
            refused = [r.error for r in results if not r.ok]
            if refused:
                break
        with Timer() as again:
            second = import_files([folder], IngestOptions(), db, catalog)
        with store.reading(db) as con:
            runs, points = store.count_runs(con)

    json_s, import_s = min(json_passes), min(import_passes)
    ratio = (n / import_s) / (n / json_s)
    unchanged = all(r.ok and r.runs_added == 0 and r.points_added == 0 for r in second)
    detail = (f"{n} files, best of {len(import_passes)} interleaved rounds: import {import_s:.2f} s "
              f"({n / import_s:,.0f} files/s; rounds {' / '.join(f'{s:.2f}' for s in import_passes)} s), "
              f"json.load {json_s:.2f} s ({n / json_s:,.0f} files/s; rounds "
              f"{' / '.join(f'{s:.2f}' for s in json_passes)} s); stored {runs} runs, {points} points; "
              f"{len(refused)} refused; re-import {again.seconds:.2f} s, "
              f"{'changed nothing' if unchanged else 'CHANGED THE DATABASE'}")
    if refused:
        detail += f"; first refusal: {refused[0]}"
    if profiler:
        print(profiler.output_text(unicode=True, color=False))
    return [Figure("import", "import files/s ÷ json.load files/s", ratio, "x",
                   f">= {TARGET}", ratio >= TARGET and not refused and unchanged, detail)]


if __name__ == "__main__":
    emit(main(sys.argv[1:]), sys.argv[1:])
