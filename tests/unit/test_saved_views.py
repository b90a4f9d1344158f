import shutil

import pytest

from models import ViewState
from opx import store
from opx.store import saved_views
from opx.errors import OpxError


@pytest.fixture
def db(seed_db, tmp_path):
    path = tmp_path / "opx.duckdb"
    shutil.copy(seed_db, path)
    return path


def test_save_get_rename_delete(db):
    with store.writing(db) as con:
        runs = [r for r in con.execute("SELECT id FROM runs LIMIT 2").fetchall()]
        a = saved_views.save(con, "  Rubin   at 500 ", "/", ViewState(target=500), [r[0] for r in runs])
        b = saved_views.save(con, "Rubin at 500", "/", ViewState(target=600), [])
        assert (a.slug, b.slug) == ("rubin-at-500", "rubin-at-500-2")
        assert a.title == "Rubin at 500" and a.query == "target=500" and a.data_version >= 1
        saved_views.rename(con, a.slug, "Renamed")
        assert saved_views.get(con, a.slug).title == "Renamed"
        assert [v.slug for v in saved_views.list_views(con)] == ["rubin-at-500-2", "rubin-at-500"] \
            or len(saved_views.list_views(con)) == 2
        assert saved_views.delete(con, b.slug) and saved_views.get(con, b.slug) is None


def test_a_saved_view_says_when_its_runs_were_deleted(db):
    with store.writing(db) as con:
        run_id = con.execute("SELECT id FROM runs WHERE hardware = 'gb300-nvl72' "
                             "AND model = 'deepseek-v4.1-flash'").fetchone()[0]
        view = saved_views.save(con, "seed", "/", ViewState(), [run_id])
        assert saved_views.missing_runs(con, view) == []
        store.delete_run(con, run_id)
        assert saved_views.missing_runs(con, view) == [run_id]


@pytest.mark.parametrize("title", ["", "   ", "x" * 121])
def test_bad_titles_are_refused(db, title):
    with store.writing(db) as con, pytest.raises(OpxError, match="title"):
        saved_views.save(con, title, "/", ViewState(), [])
