"""Every element keeps its place among its siblings from one run of a page to the next.
Streamlit's front end draws an element anew when its place moves (the Explorer's chart is
compiled again, 0.3-0.4 s in Chromium), so what shows in one run and not the next (a link's
notices, the script that rewrites the address on arrival, a caveat, an answer, a breakdown)
sits in a place of its own (`ui.element_places.in_place`)."""
import pytest
from streamlit.testing.v1 import AppTest

from models.pages import PAGES
from opx import store
from opx.store import queries
from tests.conftest import ROOT


def places(at) -> tuple[list[str], list[str]]:
    """The type of each element of the page's main area and sidebar, in order (what a place of
    its own holds may change)."""
    assert not at.exception
    return ([child.type for child in at.main.children.values()],
            [child.type for child in at.sidebar.children.values()])


def run_ids(db, model: str) -> list[str]:
    with store.reading(db) as con:
        return [str(row[0]) for row in
                queries.runs_listing(con, queries.RunFilters(model=(model,))).fetchall()]


def pick_the_first_run(at, db):
    if not any(m.key == "run" for m in at.multiselect):
        return                    # no run of these hardware reports latencies
    picker = at.multiselect(key="run")
    first = next(i for i in run_ids(db, "deepseek-v4.1-flash")
                 if picker.format_func(i) == picker.options[0])
    picker.set_value([first])


# on each page, an interaction that makes something come or go: one hardware left (no
# multiples), another statistic (other notes and captions), a run picked (the "Shown: per
# hardware" caption gone), a target no system meets
INTERACTIONS = {
    "/": lambda at, db: at.multiselect(key="hw").unselect("gb300-nvl72"),
    "/compare": lambda at, db: at.radio(key="pct").set_value("p50"),
    "/planner": lambda at, db: at.number_input(key="target").set_value(90000.0),
    "/latency": pick_the_first_run,
    "/simulate": lambda at, db: at.radio(key="sim_pct").set_value("p50"),
}


@pytest.mark.parametrize("page", [p for p in PAGES if p.nav], ids=lambda p: p.path)
@pytest.mark.parametrize("query", [{}, {"hw": ["nope", "gb300-nvl72"], "pct": "p42",
                                        "target": "-3", "y": "bogus", "run": "other model"}],
                         ids=["bare", "with-notices"])
def test_the_arrival_and_the_next_runs_place_every_element_alike(seed_db, monkeypatch, page,
                                                                query):
    """A page's arrival (bare, or on a link with notices and a run of another model) and the
    run after it; then an interaction that makes something come or go, and the run after
    that."""
    monkeypatch.setenv("OPX_DB", str(seed_db))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page(page.script)
    for k, v in query.items():
        at.query_params[k] = run_ids(seed_db, "deepseek-r1")[0] if v == "other model" else v
    arrival = places(at.run())
    assert places(at.run()) == arrival
    if page.path in INTERACTIONS:
        INTERACTIONS[page.path](at, seed_db)
        assert places(at.run()) == arrival
        assert places(at.run()) == arrival
