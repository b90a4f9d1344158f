"""Parquet datasets: exported from a DuckDB file, served read-only, parts from several hosts."""
import shutil

import pytest

from models import ViewState
from opx import store
from opx.store import dataset
from opx.errors import StoreError
from opx.answers.explorer import explore


@pytest.fixture
def exported(seed_db, tmp_path):
    out = tmp_path / "ds"
    with store.reading(seed_db) as con:
        dataset.export(con, out)
    return out


def test_a_dataset_shows_the_same_view_as_its_database(seed_db, exported, catalog):
    a = explore(seed_db, ViewState(), catalog).table()
    b = explore(exported, ViewState(), catalog).table()
    assert a.equals(b)
    with store.reading(seed_db) as a, store.reading(exported) as b:
        assert store.count_runs(a) == store.count_runs(b)
        assert store.count_runs(b)[1] > 3500


def test_parts_from_several_hosts_count_once(seed_db, exported, catalog):
    for part in (exported / "runs").glob("*.parquet"):
        shutil.copy(part, part.with_name("part-otherhost.parquet"))
    for part in (exported / "points").glob("*.parquet"):
        shutil.copy(part, part.with_name("part-otherhost.parquet"))
    with store.reading(seed_db) as a, store.reading(exported) as b:
        assert store.count_runs(a) == store.count_runs(b)


def test_a_glob_and_a_missing_layout(seed_db, exported, tmp_path):
    with store.reading(seed_db) as con:
        seeded = store.count_runs(con)
    with store.reading(f"{exported}/{{table}}/*.parquet") as con:
        assert store.count_runs(con) == seeded
    (tmp_path / "empty").mkdir()
    with pytest.raises(StoreError, match="not an opx Parquet dataset"):
        with store.reading(tmp_path / "empty"):
            pass


def test_datasets_are_read_only(exported):
    with pytest.raises(StoreError, match="read-only"):
        with store.writing(exported):
            pass


def test_the_dashboard_serves_a_dataset_read_only(exported, monkeypatch):
    from streamlit.testing.v1 import AppTest
    from tests.conftest import ROOT
    monkeypatch.setenv("OPX_DB", str(exported))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert {m.value for m in at.metric} == {"58×", "2.7×"}
    assert at.text_input(key="save_view_title").disabled


def test_a_folder_name_with_a_quote_exports(seed_db, tmp_path):
    out = tmp_path / "it's here"
    with store.reading(seed_db) as con:
        written = dataset.export(con, out)
    assert written and all(p.is_file() and p.read_bytes()[:4] == b"PAR1" for p in written.values())
