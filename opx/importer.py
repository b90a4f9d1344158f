"""Import files into the store: each file parsed whole, then written in its own transaction, so a
bad file never stops the good ones and never leaves part of itself behind."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from models import Catalog
from opx import store
from opx.ingest.core import FileResult, IngestOptions, collect_files, parse_file

Progress = Callable[[int, int, Path], None]


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
    opener = store.reading if dry_run else store.writing
    with opener(Path(db)) as con:
        for r in good:
            if dry_run:
                _, _, outcome = store.plan_write(con, r.runs)
            else:
                outcome = store.write_runs(con, r.runs)
            r.runs_added, r.points_added = outcome.runs_added, outcome.points_added
    return parsed
