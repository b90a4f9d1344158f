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
    from opx.ingest.builtin import builtin_runs
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


def _app(monkeypatch, url, replica, page=None, **params):
    """The app as a replica serves it: its own copy of the database (another URL for the same
    database gives this process another copy, as another process would hold)."""
    monkeypatch.setenv("OPX_DB", f"{url}?application_name={replica}")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    if page:
        at.switch_page(page)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def test_what_one_replica_writes_the_other_shows_at_its_next_interaction(monkeypatch, tmp_path):
    """Upload on A, seen on B; a view saved on B opens on A; a delete on A is gone on B."""
    require_postgres()
    from deploy.pgcluster import Cluster
    from opx.ingest.builtin import builtin_runs
    fixture = ROOT / "tests" / "fixtures" / "opx-csv" / "h200-sweep-part1.csv"
    with Cluster() as pg:
        with store.writing(pg.url) as con:
            store.write_runs(con, builtin_runs())
        b_data = _app(monkeypatch, pg.url, "b", "app_pages/data.py")
        before = len(next(d.value for d in b_data.dataframe if "gpus_total" in d.value.columns))
        a_data = _app(monkeypatch, pg.url, "a", "app_pages/data.py")
        uploader = a_data.get("file_uploader")[0]
        uploader.upload(fixture.name, fixture.read_bytes(), "text/csv")
        a_data.run()
        a_data.button(key="import").click().run()
        assert not a_data.exception and not _errors(a_data)
        monkeypatch.setenv("OPX_DB", f"{pg.url}?application_name=b")
        b_data.run()                                        # B's next interaction
        table = next(d.value for d in b_data.dataframe if "gpus_total" in d.value.columns)
        assert len(table) == before + 1

        b = _app(monkeypatch, pg.url, "b", target="420")
        b.text_input(key="save_view_title").input("Shared at 420")
        b.button[0].click().run()
        assert not b.exception and not _errors(b)
        opened = _app(monkeypatch, pg.url, "a", view="shared-at-420")
        assert not opened.exception and opened.number_input(key="target").value == 420

        a_data = _app(monkeypatch, pg.url, "a", "app_pages/data.py")
        a_data.text_input(key="q").input("h200-sweep-part1").run()
        a_data.button(key="delete").click().run()
        a_data.button(key="confirm_delete").click().run()
        assert any("Deleted" in s.value for s in a_data.success)
        monkeypatch.setenv("OPX_DB", f"{pg.url}?application_name=b")
        b_data.run()
        table = next(d.value for d in b_data.dataframe if "gpus_total" in d.value.columns)
        assert len(table) == before


def test_the_data_page_says_which_store_it_reads(cluster, monkeypatch, app_db):
    for db, said in ((cluster.url, f"PostgreSQL at {cluster.url}, shared by every dashboard"),
                     (str(app_db), f"the DuckDB file {app_db}")):
        monkeypatch.setenv("OPX_DB", db)
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.switch_page("app_pages/data.py")
        at.run()
        captions = [c.value.replace("\\", "").replace("\u2060", "") for c in at.caption]
        assert any(said in c for c in captions), captions[:3]
