"""Every page on a database file that is not a readable opx database shows the store's message
as text, never a traceback."""
import pytest
from streamlit.testing.v1 import AppTest

from models.pages import PAGES
from tests.conftest import ROOT


@pytest.mark.parametrize("page", [p for p in PAGES if p.name != "data"], ids=lambda p: p.name)
def test_a_zero_byte_database_gives_a_message_on_every_page(tmp_path, monkeypatch, page):
    db = tmp_path / "opx.duckdb"
    db.write_bytes(b"")
    monkeypatch.setenv("OPX_DB", str(db))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    if page.path != "/":
        at.switch_page(page.script)
    at.run()
    assert not at.exception, page.name
    assert any("not a readable opx database" in e.value for e in at.error), page.name
