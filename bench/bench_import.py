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

Two more figures, reported without a target, say why the ratio is what it is on this machine:
- the import's CPU time per file (its process and its workers) against `json.load`'s, in the
  fastest import round: the work an import does beyond decoding, whatever the core count;
- how much faster two processes `json.load` the files than one (each process half of them):
  what a second core gives here. The wall-clock ratio is about the second divided by the first,
  less the parts that run alone (starting workers, the last batch's write).
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
from opx.importer import import_files
from opx.ingest.core import IngestOptions, formats

import vllm_files

TARGET = 0.5        # import at least half as fast as json.load


def json_load_all(files: list[Path]) -> None:
    """What the import is measured against: each file opened and `json.load`-ed."""
    for f in files:
        with open(f, encoding="utf-8") as fh:
            json.load(fh)


def json_load_seconds(files: list[Path]) -> float:
    with Timer() as t:
        json_load_all(files)
    return t.seconds


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
    json_passes: list[float] = []
    import_passes: list[float] = []
    json_cpu: list[float] = []
    import_cpu: list[float] = []
    one_process: list[float] = []
    two_processes: list[float] = []
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
            cpu = cpu_seconds()
            json_passes.append(json_load_seconds(files))
            json_cpu.append(cpu_seconds() - cpu)
            if "--profile" in argv and i == 0:
                from pyinstrument import Profiler
                profiler = Profiler()
                profiler.start()
            cpu = cpu_seconds()
            with Timer() as t:
                results = import_files([folder], IngestOptions(), db, catalog)
            import_cpu.append(cpu_seconds() - cpu)     # the workers have exited: counted
            if profiler and i == 0:
                profiler.stop()
            import_passes.append(t.seconds)
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
    fastest = import_passes.index(import_s)
    cpu_ratio = import_cpu[fastest] / min(json_cpu)
    figures = [Figure("import", "import files/s ÷ json.load files/s", ratio, "x",
                      f">= {TARGET}", ratio >= TARGET and not refused and unchanged, detail),
               Figure("import", "import CPU per file ÷ json.load CPU per file", cpu_ratio, "x",
                      detail=f"fastest import {import_cpu[fastest]:.2f} s of CPU in all (its "
                             f"process and workers), json.load {min(json_cpu):.2f} s")]
    if two_processes:
        gain = min(one_process) / min(two_processes)
        figures.append(Figure(
            "import", "json.load by two processes ÷ by one (what a second core gives)", gain, "x",
            detail=f"{multiprocessing.cpu_count()} CPUs; one process {min(one_process):.2f} s, "
                   f"two {min(two_processes):.2f} s, best of {len(two_processes)}"))
    return figures


if __name__ == "__main__":
    emit(main(sys.argv[1:]), sys.argv[1:])
