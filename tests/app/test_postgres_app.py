"""The dashboard on a PostgreSQL store: every page reads it; when the server stops mid-session
every page says so in one line naming the server, and the next interaction after it is back
shows the data again, with no restart."""
import pytest
from streamlit.testing.v1 import AppTest

from models.pages import PAGES
from opx import store
from tests.conftest import ROOT, require_postgres


@pytest.fixture(scope="module")
def cluster():
    require_postgres()
    from deploy.pgcluster import Cluster
    from opx.builtin import builtin_runs
    with Cluster() as pg:
        with store.writing(pg.url) as con:
            store.write_runs(con, builtin_runs())
        yield pg


def _errors(at) -> list[str]:
    """The error texts as a reader sees them (without Markdown's escapes)."""
    return [e.value.replace("\\", "").replace("\u2060", "") for e in at.error]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_server_stopped_mid_session_is_said_on_the_page_and_the_page_recovers(cluster,
                                                                              monkeypatch, page):
    monkeypatch.setenv("OPX_DB", cluster.url)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    if page.path != "/":
        at.switch_page(page.script)
    at.run()
    assert not at.exception and not _errors(at), (page.name, _errors(at))
    cluster.stop()
    try:
        at.run()
        assert not at.exception, page.name
        said = [e for e in _errors(at) if f"the PostgreSQL server at {cluster.server} cannot be "
                                          f"reached" in e]
        assert said and all("\n" not in e for e in said), (page.name, _errors(at))
    finally:
        cluster.start()
    at.run()
    assert not at.exception and not _errors(at), (page.name, _errors(at))
