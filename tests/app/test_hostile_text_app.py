"""Text from data or links shown through Markdown (subheaders, metric labels, captions, notices,
saved-view titles) is escaped wherever it appears: no link, image, colour, icon or math
(docs/sharing.md, "Safe by construction"). The browser half is
tests/e2e/test_hostile_exports_browser.py."""
import pytest
from streamlit.testing.v1 import AppTest

from models import ViewState
from opx import store
from opx.store import saved_views
from tests.conftest import ROOT
from tests.unit.test_hostile_text import (EVIL_LINK, FORMULA_LABEL, HOSTILE_TEXTS, SCRIPT_LABEL,
                                          hostile_links, make_hostile_db, unescaped)
from ui.text import escape_md

HOSTILE_TITLE = "https://evil.example/login ![x](https://evil.example/x.png) :red[red] me@evil.example"
EVIL_URL = "https://evil.example/login"


@pytest.fixture
def hostile_ids(app_db, seed_db, catalog):
    return make_hostile_db(seed_db, app_db, catalog)


def run_app(page=None, query=""):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    if page:
        at.switch_page(page)
    params: dict[str, list[str]] = {}
    for part in filter(None, query.split("&")):
        k, _, v = part.partition("=")
        params.setdefault(k, []).append(v)
    for k, v in params.items():
        at.query_params[k] = v if len(v) > 1 else v[0]
    return at.run()


def markdown_texts(at) -> list[str]:
    """Every string the page hands to Streamlit's Markdown renderer."""
    texts = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning",
                 "error", "success"):
        texts += [e.value for e in getattr(at, kind)]
    texts += [m.label for m in at.metric]
    return texts


def assert_escaped_wherever_shown(at, hostile: list[str]) -> int:
    """Each hostile text shown is shown escaped; returns how many times one was shown."""
    shown = 0
    for text in markdown_texts(at):
        for h in hostile:
            if h in unescaped(text):
                shown += 1
                assert escape_md(h) in text, text
                assert h not in text or h == escape_md(h), text
    return shown


def test_compare_of_two_hostile_runs_escapes_their_names(hostile_ids):
    at = run_app("app_pages/compare.py", hostile_links(hostile_ids)["compare"].split("?", 1)[1])
    assert not at.exception
    assert at.subheader[0].value == escape_md(f"{SCRIPT_LABEL} vs {FORMULA_LABEL}")
    assert assert_escaped_wherever_shown(at, [SCRIPT_LABEL, FORMULA_LABEL]) >= 2


def test_the_explorer_of_hostile_runs_escapes_them(hostile_ids):
    at = run_app(query=hostile_links(hostile_ids)["explorer"].split("?", 1)[1] + "&hw=b200")
    assert not at.exception
    assert_escaped_wherever_shown(at, HOSTILE_TEXTS)


def test_a_link_value_in_a_notice_is_not_a_link(app_db):
    at = run_app(query=EVIL_LINK.split("?", 1)[1])
    assert not at.exception
    warnings = [w.value for w in at.warning]
    assert any(EVIL_URL in unescaped(w) for w in warnings), warnings
    assert assert_escaped_wherever_shown(at, [EVIL_URL]) >= 1
    assert not any("://" in w.replace("\\", "") for w in warnings)


def test_a_saved_view_title_is_text_on_the_explorer_and_the_data_page(app_db):
    with store.writing(app_db) as con:
        saved = saved_views.save(con, HOSTILE_TITLE, "/", ViewState(), [])
    explorer = run_app(query=f"view={saved.slug}")
    assert not explorer.exception
    assert assert_escaped_wherever_shown(explorer, [saved.title]) >= 1
    data = run_app("app_pages/data.py")
    assert not data.exception
    assert assert_escaped_wherever_shown(data, [saved.title]) >= 1
