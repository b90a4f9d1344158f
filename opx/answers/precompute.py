"""Work done when the data changes, so the first view after it reads rather than computes.

The envelopes are kept by the store's own write transactions (opx/store/envelopes.py). What is left is
the anchored projection of every system that has a stored simulated curve and figures to anchor
it, and the Overview's default documents (opx/answers/overview.py, which read those fits):
`refresh` makes the fit of each such system's default view (every run, each statistic the
simulator gives) that is not stored yet, and stores it (opx/store/stored_fits.py), in worker processes
when there are several. `db init`, `ingest`, `runs delete`, `simulate --save` and the dashboard's
import, delete and save call it once their write is done; a view with filters makes its own fit
once, at view time, and stores it the same way (opx.answers.anchoring.fitted).
No Streamlit.
"""
from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from models import ViewState
from opx import store
from opx.answers import anchoring, overview
from opx.store import queries
from opx.store import stored_fits
from opx.simulate import anchor as A
from opx.config import location

Say = Callable[[str], None]


@dataclass(frozen=True)
class Job:
    key: str
    hardware: str
    model: str
    workload: str
    gpus: int | None
    knobs: object
    anchors: tuple

    def text(self) -> str:
        return f"{self.hardware} · {self.model} · {self.workload}"


def default_views(db: Path) -> list[ViewState]:
    """The views whose fits are made ahead: per system with a stored simulated curve and a
    non-simulated figure, its Explorer view with every run, at each statistic the simulator
    gives."""
    with store.reading(db) as con:
        groups = queries.fit_groups(con)
    return [ViewState(model=m, workload=w, hw=(hw,), pct=pct)
            for hw, m, w in groups for pct in A.SIM_PCTS]


def jobs(db: Path, catalog) -> tuple[list[Job], set[str]]:
    """The fits the default views need that are not stored (each once), and the keys of all the
    fits they need."""
    from opx.answers.explorer import fetch
    todo: dict[str, Job] = {}
    needed: set[str] = set()
    with store.reading(db) as con:
        stored = stored_fits.keys(con)
    for view in default_views(db):
        data = fetch(db, view)
        hw = view.hw[0]
        inputs = anchoring.fit_inputs(view, hw, data.anchors, data.sim_params)
        if isinstance(inputs, str):
            continue
        anchors, knobs, budget = inputs
        key = stored_fits.key(hw, view.model, view.workload, budget, knobs, catalog, anchors)
        needed.add(key)
        if key not in stored and key not in todo:
            todo[key] = Job(key, hw, view.model, view.workload, budget, knobs, tuple(anchors))
    return list(todo.values()), needed


def _make(job: Job, catalog) -> tuple[str, bytes | None, str]:
    try:
        f = A.fit(job.hardware, job.model, job.workload, job.gpus, job.knobs, catalog,
                  list(job.anchors))
    except ValueError as exc:              # the simulator cannot serve it: the view says why
        return job.key, None, str(exc)
    return job.key, stored_fits.encode(f), ""


def refresh(db: Path, catalog=None, say: Say | None = None, workers: int | None = None) -> int:
    """Make and store the default views' missing fits (see the module docstring); returns how
    many were made. `say` gets a line when it starts and one per fit; `workers` (default: one
    per CPU, at most 2, and 1 when there is one fit) worker processes."""
    from opx.catalog import load_catalog
    catalog = catalog or load_catalog()
    say = say or (lambda _: None)
    todo, needed = jobs(location(db), catalog)
    by_key = {j.key: j for j in todo}
    made: list[tuple[str, bytes]] = []
    if todo:
        start = time.perf_counter()
        say(f"anchored projections: making {len(todo)} for the default views…")
        count = workers or min(2, multiprocessing.cpu_count() or 1)
        count = max(1, min(count, len(todo)))
        for i, (key, payload, error) in enumerate(_run(todo, catalog, count), 1):
            job = by_key[key]
            if payload is not None:
                made.append((key, payload))
            say(f"anchored projections: {i}/{len(todo)} {job.text()}"
                + (f" (not anchored: {error})" if error else ""))
        say(f"anchored projections: {len(made)} made in {time.perf_counter() - start:.1f} s")
    if made:        # nothing new: nothing to write (a write would change the file's stamp)
        with store.writing(location(db)) as con:
            for key, payload in made:
                job = by_key[key]
                stored_fits.save(con, key, job.hardware, job.model, job.workload, payload)
    # the default overviews read the fits: made after them
    # quietly: a write makes again only the rows of the slices it changed (about a second)
    documents, kept = overview.refresh(location(db), catalog)
    spread, key = _refresh_spread(location(db))
    if made or documents or spread:
        with store.writing(location(db)) as con:
            stored_fits.prune(con, needed | kept | {key})   # what the new documents replace
    return len(made)


def _refresh_spread(db) -> tuple[bool, str]:
    """Store the spread of the repeat sets (the Simulate page's floor) where it is missing;
    returns whether it was made, and its key."""
    from opx.store import repeats, stored_documents
    with store.reading(db) as con:
        key = repeats.spread_key(store.data_version(con))
        if key in stored_documents.keys(con):
            return False, key
        summary = repeats.spread_summary(con)
    with store.writing(db) as con:
        stored_documents.save(con, key, summary)
    return True, key


def _run(todo: list[Job], catalog, count: int):
    if count == 1:
        for job in todo:
            yield _make(job, catalog)
        return
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    with ProcessPoolExecutor(count, mp_context=multiprocessing.get_context(method)) as pool:
        futures = [pool.submit(_make, job, catalog) for job in todo]
        for done in as_completed(futures):
            yield done.result()
