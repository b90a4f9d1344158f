"""Import files into the store: each file parsed whole, then written, so a bad file never stops
the good ones and never leaves part of itself behind.

Every file is parsed (and so checked) before anything is written; a file refused at parse time
writes nothing. The good files are then written in batches, one transaction per batch (a
transaction per file cost most of an import's time). If a batch's write fails, it is rolled back
whole and its files are written one by one, each in its own transaction, as before batching.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
import time
from pathlib import Path

import duckdb

from models import Catalog
from opx import store
from opx.ingest.core import FileResult, IngestOptions, collect_files, parse_file

Progress = Callable[[int, int, Path], None]

# A batch: at most this many files, or this many points, in one transaction.
BATCH_FILES = 500
BATCH_POINTS = 50_000
READER_GAP_S = 0.05      # pause between batches, with the lock released


def import_files(paths: Iterable[str | Path], options: IngestOptions, db: Path, catalog: Catalog,
                 dry_run: bool = False, progress: Progress | None = None) -> list[FileResult]:
    files, results = collect_files(paths)
    parsed = []
    for i, path in enumerate(files):
        parsed.append(parse_file(path, options, catalog))
        if progress:
            progress(i + 1, len(files), path)
    return results + write_results(parsed, db, dry_run)


def import_uploads(uploads: Iterable[tuple[str, bytes]], options: IngestOptions, db: Path,
                   catalog: Catalog, dry_run: bool = False) -> list[FileResult]:
    """Files from the browser: the same checks, with the uploaded name in every message."""
    parsed = [parse_file(Path(name), options, catalog, data=data, display_name=name)
              for name, data in uploads]
    return write_results(parsed, db, dry_run)


def write_results(parsed: list[FileResult], db: Path, dry_run: bool) -> list[FileResult]:
    good = [r for r in parsed if r.ok]
    if not good:
        return parsed
    if dry_run and not Path(db).exists():
        for r in good:
            r.runs_added = len(r.runs)
            r.points_added = sum(len(run.points) for run in r.runs)
        return parsed
    if dry_run:
        # Each file planned on its own against the stored data, as a dry run always has.
        with store.reading(Path(db)) as con:
            for r in good:
                _, _, outcome = store.plan_write(con, r.runs)
                r.runs_added, r.points_added = outcome.runs_added, outcome.points_added
        return parsed
    # The write lock is taken per batch and released between batches, so dashboard readers (which
    # retry on the lock) get in while a long import runs.
    for batch in _batches(good):
        with store.writing(Path(db)) as con:
            _write_batch(con, batch)
        time.sleep(READER_GAP_S)
    return parsed


def _batches(results: list[FileResult]) -> Iterator[list[FileResult]]:
    batch: list[FileResult] = []
    points = 0
    for r in results:
        n = sum(len(run.points) for run in r.runs)
        if batch and (len(batch) >= BATCH_FILES or points + n > BATCH_POINTS):
            yield batch
            batch, points = [], 0
        batch.append(r)
        points += n
    if batch:
        yield batch


def _write_one(con: duckdb.DuckDBPyConnection, r: FileResult) -> None:
    outcome = store.write_runs(con, r.runs)
    r.runs_added, r.points_added = outcome.runs_added, outcome.points_added


def _write_batch(con: duckdb.DuckDBPyConnection, batch: list[FileResult]) -> None:
    """Write the files of a batch in one transaction and say what each file added, exactly as
    writing them one after another would have (a run counts for the first file that brings it,
    a point for the first file that holds it)."""
    if len(batch) == 1:
        _write_one(con, batch[0])
        return
    # Every point stored from a file carries that file's source (its name and sha256), and the
    # first point of a new run has seq 0: counting both per source before and after the write
    # tells what each file added, without hashing every run and point a second time.
    sources = list(dict.fromkeys(s for r in batch for s in _sources(r)))
    before = _counts_by_source(con, sources)
    try:
        store.write_runs(con, [run for r in batch for run in r.runs])
    except Exception:           # rolled back whole: write the files one by one, as before
        for r in batch:
            _write_one(con, r)
        return
    after = _counts_by_source(con, sources)
    claimed: set[str] = set()
    for r in batch:
        mine = [s for s in _sources(r) if s not in claimed]
        claimed.update(mine)     # a later file with the same source (same name and bytes) adds nothing
        r.runs_added = sum(after.get(s, (0, 0))[0] - before.get(s, (0, 0))[0] for s in mine)
        r.points_added = sum(after.get(s, (0, 0))[1] - before.get(s, (0, 0))[1] for s in mine)


def _sources(r: FileResult) -> list[str]:
    """The sources the store records for a file's points (a point without one takes its run's)."""
    return list(dict.fromkeys(p.source or run.source for run in r.runs for p in run.points))


def _counts_by_source(con: duckdb.DuckDBPyConnection, sources: list[str]
                      ) -> dict[str, tuple[int, int]]:
    """Per point source: (runs whose first point it is, points)."""
    if not sources:
        return {}
    rows = con.execute(
        "SELECT source, count(*) FILTER (WHERE seq = 0), count(*) FROM points "
        "WHERE source IN (SELECT unnest(?::VARCHAR[])) GROUP BY source", [sources]).fetchall()
    return {source: (firsts, points) for source, firsts, points in rows}
