"""Every element keeps its place among its siblings from one run of a page to the next.
Streamlit's front end draws an element anew when its place moves (the Explorer's chart is
compiled again, 0.3-0.4 s in Chromium), so what shows in one run and not the next (a link's
notices, the script that rewrites the address on arrival, a caveat) sits in a place of its own
(`ui.widgets.in_place`)."""
import pytest
from streamlit.testing.v1 import AppTest

from models.pages import PAGES
from tests.conftest import ROOT


def places(node) -> list[str]:
    """The type of each element of the page's main area or sidebar, in order (what a place of
    its own holds may change)."""
    return [child.type for child in node.children.values()]


@pytest.mark.parametrize("page", [p for p in PAGES if p.nav], ids=lambda p: p.path)
@pytest.mark.parametrize("query", [{}, {"hw": ["nope", "gb300-nvl72"], "pct": "p42",
                                        "target": "-3", "y": "bogus"}],
                         ids=["bare", "with-notices"])
def test_the_arrival_and_the_next_run_place_every_element_alike(seed_db, monkeypatch, page,
                                                               query):
    monkeypatch.setenv("OPX_DB", str(seed_db))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page(page.script)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception
    arrival = places(at.main), places(at.sidebar)
    at.run()                                  # the run any interaction starts next
    assert not at.exception
    assert (places(at.main), places(at.sidebar)) == arrival
