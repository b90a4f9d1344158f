"""Import files into the store: each file parsed whole, then written, so a bad file never stops
the good ones and never leaves part of itself behind.

A file refused at parse time writes nothing. Many files are parsed by worker processes (parsing is
pure Python, one core per process), each sending back per file its outcome and the rows to write,
while this process writes what has come back. Good files are written in batches, one transaction
per batch (a transaction per file cost most of an import's time); a batch is written only once all
its files are parsed. If a batch's write fails, it is rolled back whole and its files are written
one by one, each in its own transaction. If the database cannot be written at all (a full disk, a
busy or corrupt file: a StoreError), the import stops there: the files of the earlier batches are
stored, and that batch's files and every later one are reported as not stored.
"""
from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import duckdb

from models import Catalog
from opx import store
from opx.errors import OpxError, StoreError
from opx.ingest.core import FileResult, IngestOptions, collect_files, formats, parse_files
from opx.config import location

Progress = Callable[[int, int, Path], None]

# A batch: at most this many files, or this many points, in one transaction. Opening the file
# for writing costs ~50 ms, so batches are not tiny; but a reader waits for the batch being
# written (opx.store's gate), so a batch is written in well under a second even on a loaded
# machine, and readers get their turn between two batches (bench/bench_reader_wait.py).
BATCH_FILES = 1_000
BATCH_POINTS = 20_000

# Worker processes pay off from this many files on (starting them costs ~0.1 s), at most this many.
PARALLEL_MIN_FILES = 400
MAX_WORKERS = 8
CHUNK_FILES = 200        # files per task sent to a worker


def import_files(paths: Iterable[str | Path], options: IngestOptions, db: Path, catalog: Catalog,
                 dry_run: bool = False, progress: Progress | None = None,
                 workers: int | None = None) -> list[FileResult]:
    """`workers`: parsing processes (None: one per CPU, up to MAX_WORKERS, for large imports;
    1: parse in this process)."""
    files, missing = collect_files(paths)
    if dry_run:
        return missing + write_results(parse_all(files, options, catalog, progress, workers),
                                       db, dry_run)
    parsed: list[FileResult] = []

    def good() -> Iterator[FileResult]:
        for result in iter_parsed(files, options, catalog, progress, workers):
            parsed.append(result)
            if result.ok:
                yield result
    done, failure = _write_batches(good(), location(db))
    if failure is not None:
        # Files never parsed (the import stopped before them) were not stored either.
        parsed += [FileResult(path) for path in files[len(parsed):]]
        _after_failure([r for r in parsed if r.ok], done, failure, location(db))
    return missing + parsed


def import_uploads(uploads: Iterable[tuple[str, bytes]], options: IngestOptions, db: Path,
                   catalog: Catalog, dry_run: bool = False) -> list[FileResult]:
    """Files from the browser: the same checks, with the uploaded name in every message."""
    parsed = parse_files([(Path(name), data, name) for name, data in uploads], options, catalog)
    return write_results(parsed, db, dry_run)


# -- parsing ------------------------------------------------------------------------------------

def changed_data(results: Iterable[FileResult], dry_run: bool = False) -> bool:
    """Whether an import stored anything (then what depends on the data is made again:
    opx.answers.precompute)."""
    return not dry_run and any(r.ok and (r.runs_added or r.points_added) for r in results)


def parse_all(files: list[Path], options: IngestOptions, catalog: Catalog,
              progress: Progress | None = None, workers: int | None = None) -> list[FileResult]:
    return list(iter_parsed(files, options, catalog, progress, workers))


def iter_parsed(files: list[Path], options: IngestOptions, catalog: Catalog,
                progress: Progress | None = None, workers: int | None = None
                ) -> Iterator[FileResult]:
    """Every file parsed, in order. With several workers, each result comes back with its runs
    already turned into rows (`FileResult.rows`) and `runs` left empty."""
    count = _worker_count(len(files), workers)
    chunks = [files[i:i + CHUNK_FILES] for i in range(0, len(files), CHUNK_FILES)]
    done = 0

    def report(chunk: list[Path]) -> None:
        nonlocal done
        done += len(chunk)
        if progress:
            progress(done, len(files), chunk[-1])

    pool = _pool(count, options, catalog) if count > 1 else None
    finished = 0
    if pool is not None:
        try:
            names = [[str(path) for path in chunk] for chunk in chunks]
            for chunk, outcomes in zip(chunks, pool.map(_parse_chunk, names)):
                for path, (format_, error, notices, rows) in zip(chunk, outcomes):
                    yield FileResult(path, format_, error=error, notices=notices, rows=rows)
                finished += 1
                report(chunk)
        except (BrokenProcessPool, OSError):
            # A worker died (killed, out of memory) or could not start: the rest is parsed here.
            pass
        finally:
            # Also when the import stops early (a write failed): chunks not started are dropped.
            pool.shutdown(wait=True, cancel_futures=True)
    for chunk in chunks[finished:]:
        yield from parse_files(chunk, options, catalog)
        report(chunk)


def _pool(count: int, options: IngestOptions, catalog: Catalog) -> ProcessPoolExecutor | None:
    """Worker processes, or None where the platform cannot start them (then parsing is done in
    this process). fork: the workers start with the modules and the catalog already loaded
    (Linux; elsewhere the platform's default start method re-imports them)."""
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    formats()           # the format modules, imported once here rather than in every worker
    try:
        return ProcessPoolExecutor(count, mp_context=multiprocessing.get_context(method),
                                   initializer=_start_worker,
                                   initargs=(options, catalog, os.getpid()))
    except (OSError, NotImplementedError):
        return None


def _worker_count(files: int, workers: int | None) -> int:
    if workers is not None:
        return max(1, workers)
    if files < PARALLEL_MIN_FILES:
        return 1
    return min(os.cpu_count() or 1, MAX_WORKERS, -(-files // CHUNK_FILES))


_WORKER: dict = {}
PR_SET_PDEATHSIG = 1        # prctl(2), Linux


def _start_worker(options: IngestOptions, catalog: Catalog, importer: int) -> None:
    _WORKER["options"], _WORKER["catalog"] = options, catalog
    _exit_with(importer)


def _exit_with(importer: int) -> None:
    """A worker whose importer died (killed, say) would wait for work forever: on Linux the
    kernel ends it when the importer's thread that started it (the one running the import)
    ends. Elsewhere it stays until killed."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != importer:         # the importer died before the call above
        os._exit(1)


def _parse_chunk(paths: list[str]) -> list[tuple]:
    """Each file's outcome as plain values (format, error, notices, rows): what the importer
    needs, cheaper to send back than the parsed runs."""
    return [(result.format, result.error, result.notices, rows_of(result))
            for result in parse_files([Path(p) for p in paths], _WORKER["options"],
                                      _WORKER["catalog"])]


def rows_of(result: FileResult) -> list[store.RunRows]:
    """The rows a parsed file would write (computed once, kept on the result)."""
    if result.rows is None:
        result.rows = [store.rows_of(run) for run in result.runs]
    return result.rows


# -- writing ------------------------------------------------------------------------------------

def write_results(parsed: list[FileResult], db: Path, dry_run: bool) -> list[FileResult]:
    good = [r for r in parsed if r.ok]
    if not good:
        return parsed
    if dry_run and not store.exists(db):
        for r in good:
            r.runs_added = len(rows_of(r))
            r.points_added = sum(len(rows.points) for rows in rows_of(r))
        return parsed
    if dry_run:
        # Each file planned on its own against the stored data, as a dry run always has.
        with store.reading(location(db)) as con:
            for r in good:
                _, _, outcome = store.plan_write(con, rows_of(r))
                r.runs_added, r.points_added = outcome.runs_added, outcome.points_added
        return parsed
    done, failure = _write_batches(good, location(db))
    if failure is not None:
        _after_failure(good, done, failure, location(db))
    return parsed


def _after_failure(good: list[FileResult], done: list[FileResult], failure: StoreError,
                   db: Path) -> None:
    """The summary after a database error: the files committed are stored; of the others, those
    whose every run and point is in the database all the same are stored too (checked against
    it); the rest are not stored, each with the error."""
    written = {id(r) for r in done}
    rest = [r for r in good if id(r) not in written]
    anyway = _stored_anyway(rest, db)
    _not_stored([r for r in rest if id(r) not in anyway], failure)


def _write_batches(good: Iterable[FileResult], db: Path) -> tuple[list[FileResult],
                                                                  StoreError | None]:
    """The good files stored (each as its transaction committed: a batch that falls back to one
    file at a time keeps the files written before it stopped), and the StoreError that stopped
    the import, if one did."""
    # The write lock is taken per batch and released between batches, so dashboard readers get in
    # while a long import runs.
    done: list[FileResult] = []
    for batch in _batches(good):
        try:
            with store.writing(db) as con:
                _write_batch(con, batch, done)
        except StoreError as exc:
            return done, exc
    return done, None


def _stored_anyway(results: list[FileResult], db: Path) -> set[int]:
    """After a failed import, the files (by `id`) every run and point of which is in the database
    all the same (a write whose commit went through before the error, or a file stored before):
    the summary counts them as stored, adding nothing. Checked in one query."""
    wanted = [(i, rows.run_id, p[0]) for i, r in enumerate(results) for rows in rows_of(r)
              for p in rows.points]
    if not wanted:
        return set()
    try:
        with store.reading(db) as con:
            present = store.stored_points(con, [(run, key) for _, run, key in wanted])
    except Exception:       # the database cannot be read either: nothing is claimed
        return set()
    missing = {i for i, run, key in wanted if (run, key) not in present}
    out = set()
    for i, r in enumerate(results):
        if i not in missing and rows_of(r):
            r.runs_added = r.points_added = 0
            r.notices.append("stored (all its runs and points are in the database) although "
                             "the import stopped at a database error")
            out.add(id(r))
    return out


def _not_stored(results: list[FileResult], failure: StoreError) -> None:
    """Mark the files the import could not store; each keeps the error that stopped it."""
    for r in results:
        r.store_error = failure
        r.runs_added = r.points_added = 0
        r.error = str(OpxError(r.path, "", "not stored: the import stopped at a database error"))


def _batches(results: Iterable[FileResult]) -> Iterator[list[FileResult]]:
    batch: list[FileResult] = []
    points = 0
    for r in results:
        n = sum(len(rows.points) for rows in rows_of(r))
        if batch and (len(batch) >= BATCH_FILES or points + n > BATCH_POINTS):
            yield batch
            batch, points = [], 0
        batch.append(r)
        points += n
    if batch:
        yield batch


def _write_one(con: duckdb.DuckDBPyConnection, r: FileResult) -> None:
    outcome = store.write_runs(con, rows_of(r))
    r.runs_added, r.points_added = outcome.runs_added, outcome.points_added


def _write_batch(con: duckdb.DuckDBPyConnection, batch: list[FileResult],
                 done: list[FileResult]) -> None:
    """Write the files of a batch in one transaction and say what each file added, exactly as
    writing them one after another would have (a run counts for the first file that brings it,
    a point for the first file that holds it: the store plans the rows in that order). Each file
    whose rows are committed is appended to `done`."""
    try:
        outcome = store.write_runs(con, [rows for r in batch for rows in rows_of(r)])
    except Exception:           # rolled back whole: write the files one by one
        for r in batch:
            _write_one(con, r)
            done.append(r)
        return
    added = iter(outcome.added)
    for r in batch:
        counts = [next(added) for _ in rows_of(r)]
        r.runs_added = sum(runs for runs, _ in counts)
        r.points_added = sum(points for _, points in counts)
    done.extend(batch)
