"""Writes by a visitor who may not write, forged through AppTest (issue #15, class 5).

A disabled button is only what the browser shows: Streamlit 1.56-1.60 acted on a forged click on a
disabled widget. Every write therefore checks permission itself (`ui.permissions.require_write`) at
the moment it writes. These tests emulate those Streamlit versions (`forged_clicks_reach_the_page`)
and forge each write in read-only mode and with a wrong admin token: nothing in the database
changes and an error is shown. Streamlit >= 1.64 (requirements.txt) discards such clicks itself, the
second line, checked last.
"""
import ast
import dataclasses
import re

import pytest
from streamlit.testing.v1 import AppTest

from models import ViewState
from opx import store
from opx.store import saved_views
from tests.conftest import ROOT

FIX = ROOT / "tests" / "fixtures" / "opx-csv"
REFUSED = "Nothing was changed"


@pytest.fixture
def db(app_db):
    return app_db


@pytest.fixture
def forged_clicks_reach_the_page(monkeypatch):
    """Streamlit before 1.64: a value reported for a disabled widget (a forged message; AppTest
    refuses to send one, so that refusal is lifted too) reaches the script."""
    from streamlit.runtime.state import widgets
    from streamlit.testing.v1 import element_tree
    real = widgets.register_widget_from_metadata

    def register(metadata, ctx):
        return real(dataclasses.replace(metadata, disabled=False), ctx)

    monkeypatch.setattr(widgets, "register_widget_from_metadata", register)
    monkeypatch.setattr(element_tree.Widget, "_assert_can_interact", lambda self: None)


@pytest.fixture(params=["read-only", "wrong-token"])
def visitor(request, monkeypatch):
    """How the visitor is refused: OPX_READ_ONLY=1, or OPX_ADMIN_TOKEN set and a wrong one typed."""
    if request.param == "read-only":
        monkeypatch.setenv("OPX_READ_ONLY", "1")
        monkeypatch.delenv("OPX_ADMIN_TOKEN", raising=False)
    else:
        monkeypatch.delenv("OPX_READ_ONLY", raising=False)
        monkeypatch.setenv("OPX_ADMIN_TOKEN", "s3cret")
    return request.param


def open_page(visitor, page=None):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if page:
        at.switch_page(page)
    at.run()
    if visitor == "wrong-token":
        at.text_input(key="admin_token").input("wrong").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def counts(db):
    with store.reading(db) as con:
        return store.count_runs(con), [(v.slug, v.title) for v in saved_views.list_views(con)]


def assert_refused(at, db, before):
    assert not at.exception, [e.value for e in at.exception]
    assert counts(db) == before
    assert any(REFUSED in e.value for e in at.error), [e.value for e in at.error]


def add_saved_view(db, title="Rubin at 500"):
    with store.writing(db) as con:
        return saved_views.save(con, title, "/", ViewState(target=500), []).slug


@pytest.mark.usefixtures("forged_clicks_reach_the_page")
def test_forged_import_writes_nothing(db, visitor):
    at = open_page(visitor, "app_pages/data.py")
    before = counts(db)
    at.get("file_uploader")[0].upload("h200-sweep-part1.csv",
                                      (FIX / "h200-sweep-part1.csv").read_bytes(), "text/csv")
    at.run()
    assert at.button(key="import").disabled
    at.button(key="import").click().run()
    assert_refused(at, db, before)
    at.button(key="check").click().run()
    assert_refused(at, db, before)


@pytest.mark.usefixtures("forged_clicks_reach_the_page")
def test_forged_delete_of_a_run_writes_nothing(db, visitor):
    at = open_page(visitor, "app_pages/data.py")
    before = counts(db)
    assert at.button(key="delete").disabled
    at.button(key="delete").click().run()
    assert_refused(at, db, before)
    assert "pending_delete" not in at.session_state
    # The confirmation forged too (as if the permission went between the two clicks).
    run_id = at.selectbox(key="delete_choice").value
    at.session_state["pending_delete"] = (run_id, run_id)
    at.run()
    assert at.button(key="confirm_delete").disabled
    at.button(key="confirm_delete").click().run()
    assert_refused(at, db, before)


@pytest.mark.usefixtures("forged_clicks_reach_the_page")
def test_forged_save_view_writes_nothing(db, visitor):
    at = open_page(visitor)
    before = counts(db)
    at.text_input(key="save_view_title").input("forged")
    save = next(b for b in at.button if b.label == "Save view")
    assert save.disabled
    save.click().run()
    assert_refused(at, db, before)


@pytest.mark.usefixtures("forged_clicks_reach_the_page")
def test_forged_rename_and_delete_of_a_saved_view_write_nothing(db, visitor):
    slug = add_saved_view(db)
    at = open_page(visitor, "app_pages/data.py")
    before = counts(db)
    assert before[1] == [(slug, "Rubin at 500")]
    at.text_input(key=f"rename_{slug}").input("renamed")
    assert at.button(key=f"do_rename_{slug}").disabled
    at.button(key=f"do_rename_{slug}").click().run()
    assert_refused(at, db, before)
    assert at.button(key=f"del_view_{slug}").disabled
    at.button(key=f"del_view_{slug}").click().run()
    assert_refused(at, db, before)


@pytest.mark.usefixtures("forged_clicks_reach_the_page")
def test_forged_save_of_simulated_runs_writes_nothing(db, visitor):
    at = open_page(visitor, "app_pages/simulate.py")
    before = counts(db)
    assert at.button(key="save_simulation").disabled
    at.button(key="save_simulation").click().run()
    assert_refused(at, db, before)


def test_every_write_in_the_dashboard_is_guarded_by_require_write():
    """Each call that writes (`store.writing`, `import_uploads`, `ui.data.written`) in app_pages/
    and ui/ sits in an `if` whose condition calls `require_write()`, so a new write site cannot
    skip the check."""
    writes = {"writing", "import_uploads", "written"}
    found = 0
    for path in sorted((ROOT / "app_pages").glob("*.py")) + sorted((ROOT / "ui").glob("*.py")):
        tree = ast.parse(path.read_text())
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and _name(node.func) in writes):
                continue
            found += 1
            guards, up = [], node
            while up in parents:
                child, up = up, parents[up]
                if isinstance(up, ast.If) and child in up.body:
                    guards.append(up.test)
            assert any(_name(c.func) == "require_write" for g in guards for c in ast.walk(g)
                       if isinstance(c, ast.Call)), f"{path.name}:{node.lineno} writes unchecked"
    assert found >= 6        # import, delete run, save view, rename, delete view, save simulation


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def test_streamlit_discards_clicks_on_disabled_widgets(db, monkeypatch):
    """The second line: requirements.txt asks for a Streamlit that drops a forged click on a
    disabled widget before the page runs, and the installed one does."""
    import streamlit
    from packaging.requirements import Requirement
    from packaging.version import Version
    line = next(s for s in (ROOT / "requirements.txt").read_text().splitlines()
                if re.match(r"streamlit\b", s))
    spec = Requirement(line.split("#")[0].strip()).specifier
    assert not spec.contains("1.63.99") and spec.contains("1.64.0"), line
    assert Version(streamlit.__version__) in spec
    from streamlit.testing.v1 import element_tree
    monkeypatch.setattr(element_tree.Widget, "_assert_can_interact", lambda self: None)
    monkeypatch.setenv("OPX_READ_ONLY", "1")
    at = open_page("read-only", "app_pages/data.py")
    before = counts(db)
    at.button(key="delete").click().run()
    assert not at.exception and counts(db) == before
    assert "pending_delete" not in at.session_state
    assert not any(REFUSED in e.value for e in at.error)     # dropped before the page saw it


@pytest.mark.parametrize("page", ["app_pages/explorer.py", "app_pages/data.py",
                                  "app_pages/simulate.py", "app_pages/planner.py",
                                  "app_pages/embed.py"])
def test_an_unknown_read_only_value_stops_every_page(db, monkeypatch, page):
    monkeypatch.setenv("OPX_READ_ONLY", "2")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page(page)
    at.run()
    assert not at.exception
    assert any("OPX_READ_ONLY" in e.value.replace("\\", "") and "is not one of" in e.value
               for e in at.error)
    assert not at.get("button") and not at.get("file_uploader") and not at.dataframe
