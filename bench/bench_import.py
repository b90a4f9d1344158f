"""Import speed: files per second importing a folder of 10,000 vLLM result files.

    .venv/bin/python bench/bench_import.py [--files N] [--rounds R] [--profile] [--json FILE]

The files (bench/vllm_files.py) are shaped like the vLLM fixtures in ../shared/fixtures/vllm and
carry `--metadata hardware=... gpus=... model=...`, so they import without flags. The import is
`opx.store.importer.import_files` on the folder (finding the files, detecting, parsing, validating,
writing, with worker processes as `ingest` uses by default) into a fresh database; module
imports and the catalog are loaded before the clock starts. Of R rounds (3 by default) the
fastest counts; the target is 2,000 files/s. A second import of the same folder must add nothing.
`--profile` prints a pyinstrument profile of the importing process, not its workers (pip install
pyinstrument).

Two more figures, without a target, say what the machine gave at the time:
- the import's CPU time per file (its process and its workers) in the fastest round, beside
  `json.load`'s CPU per file of the same files (timed between the import rounds): the work an
  import does, whatever the core count and the other load;
- how much faster two processes `json.load` the files than one (each process half of them):
  what a second core gives at the moment (about 2x on an idle 2-CPU machine, 1x or less on a
  busy one).
"""
from __future__ import annotations

import json
import multiprocessing
import resource
import sys
import tempfile
from pathlib import Path

from _common import Figure, Timer, arg_int, emit

import pandas  # noqa: F401  (DuckDB loads it on the first Arrow insert: loaded before the clock like every module)

from opx import store
from opx.catalog import load_catalog
from opx.store.importer import import_files
from opx.ingest.core import IngestOptions, formats

import vllm_files

TARGET_FILES_PER_S = 2_000


def json_load_all(files: list[Path]) -> None:
    """Each file opened and `json.load`-ed: the machine's speed at the time, for reference."""
    for f in files:
        with open(f, encoding="utf-8") as fh:
            json.load(fh)


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def processes_seconds(files: list[Path], count: int) -> float:
    """Wall time for `count` forked processes to json.load the files, each its share."""
    context = multiprocessing.get_context("fork")
    shares = [files[i::count] for i in range(count)]
    with Timer() as t:
        procs = [context.Process(target=json_load_all, args=(share,)) for share in shares]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
    return t.seconds


def main(argv: list[str]) -> list[Figure]:
    n = arg_int(argv, "--files", 10_000)
    rounds = arg_int(argv, "--rounds", 3)
    catalog = load_catalog()
    formats()                                      # the format modules, like every module
    import_passes: list[float] = []
    import_cpu: list[float] = []
    json_cpu: list[float] = []
    one_process: list[float] = []
    two_processes: list[float] = []
    with tempfile.TemporaryDirectory(prefix="opx-bench-import-") as tmp:
        folder = Path(tmp) / "results"
        files = vllm_files.write_files(folder, n)
        profiler = None
        for i in range(rounds):
            db = Path(tmp) / f"opx-{i}.duckdb"
            with store.writing(db):
                pass                               # an empty, current database
            if "--profile" in argv and i == 0:
                from pyinstrument import Profiler
                profiler = Profiler()
                profiler.start()
            cpu = cpu_seconds()
            with Timer() as t:
                results = import_files([folder], IngestOptions(), db, catalog)
            import_cpu.append(cpu_seconds() - cpu)     # the workers have exited: counted
            import_passes.append(t.seconds)
            if profiler and i == 0:
                profiler.stop()
            cpu = cpu_seconds()
            json_load_all(files)
            json_cpu.append(cpu_seconds() - cpu)
            if "fork" in multiprocessing.get_all_start_methods():
                one_process.append(processes_seconds(files, 1))
                two_processes.append(processes_seconds(files, 2))
            refused = [r.error for r in results if not r.ok]
            if refused:
                break
        with Timer() as again:
            second = import_files([folder], IngestOptions(), db, catalog)
        with store.reading(db) as con:
            runs, points = store.count_runs(con)

    import_s = min(import_passes)
    files_per_s = n / import_s
    unchanged = all(r.ok and r.runs_added == 0 and r.points_added == 0 for r in second)
    detail = (f"{n} files, fastest of {len(import_passes)} rounds: {import_s:.2f} s (rounds "
              f"{' / '.join(f'{s:.2f}' for s in import_passes)} s); stored {runs} runs, "
              f"{points} points; {len(refused)} refused; re-import {again.seconds:.2f} s, "
              f"{'changed nothing' if unchanged else 'CHANGED THE DATABASE'}")
    if refused:
        detail += f"; first refusal: {refused[0]}"
    if profiler:
        print(profiler.output_text(unicode=True, color=False))
    fastest = import_passes.index(import_s)
    cpu_us = import_cpu[fastest] / n * 1e6
    json_us = min(json_cpu) / n * 1e6
    figures = [Figure("import", f"import files/s ({n:,} vLLM files)", files_per_s, "files/s",
                      f">= {TARGET_FILES_PER_S:,}",
                      files_per_s >= TARGET_FILES_PER_S and not refused and unchanged, detail),
               Figure("import", "import CPU per file (its process and workers)", cpu_us, "µs",
                      detail=f"{import_cpu[fastest]:.2f} s of CPU in the fastest round, "
                             f"{cpu_us / json_us:.1f}x the {json_us:.0f} µs a file of "
                             f"json.load-ing the same files")]
    if two_processes:
        gain = min(one_process) / min(two_processes)
        figures.append(Figure(
            "import", "json.load by two processes ÷ by one (what a second core gives)", gain, "x",
            detail=f"{multiprocessing.cpu_count()} CPUs; one process {min(one_process):.2f} s, "
                   f"two {min(two_processes):.2f} s, best of {len(two_processes)}"))
    return figures


if __name__ == "__main__":
    emit(main(sys.argv[1:]), sys.argv[1:])
