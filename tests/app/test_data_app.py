"""The Data page through AppTest: upload, per-file results, search, delete with confirmation."""

import pytest
from streamlit.testing.v1 import AppTest

from opx import store
from tests.conftest import ROOT

FIX = ROOT / "tests" / "fixtures" / "opx-csv"


@pytest.fixture
def db(app_db):
    return app_db


def open_data_page():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("app_pages/data.py")
    return at.run()


def test_upload_imports_good_files_and_reports_bad_ones(db):
    with store.reading(db) as con:
        seeded = store.count_runs(con)
    at = open_data_page()
    assert not at.exception
    uploader = at.get("file_uploader")[0]
    uploader.upload("h200-sweep-part1.csv", (FIX / "h200-sweep-part1.csv").read_bytes(), "text/csv")
    uploader.upload("broken.json", b'{"completed": 3', "application/json")
    at.run()
    at.button(key="import").click().run()
    assert not at.exception
    results = next(d.value for d in at.dataframe if "Result" in d.value.columns)
    by_file = dict(zip(results.File, results.Result))
    assert by_file["h200-sweep-part1.csv"] == "added 1 run(s), 2 point(s)"
    assert by_file["broken.json"].startswith("error: ")
    with store.reading(db) as con:
        runs, points = store.count_runs(con)
    assert points == seeded[1] + 2


def test_search_and_delete_with_confirmation(db):
    at = open_data_page()
    at.text_input(key="q").input("DaoCloud").run()
    table = next(d.value for d in at.dataframe if "gpus_total" in d.value.columns)
    assert len(table) == 1 and table.iloc[0].model == "deepseek-v3.2"
    with store.reading(db) as con:
        seeded = store.count_runs(con)[0]
    at.button(key="delete").click().run()
    assert not at.exception
    with store.reading(db) as con:
        assert store.count_runs(con)[0] == seeded      # nothing deleted before confirming
    at.button(key="confirm_delete").click().run()
    assert not at.exception
    with store.reading(db) as con:
        assert store.count_runs(con)[0] == seeded - 1
    assert any("Deleted" in s.value for s in at.success)


def test_downloads_are_offered(db):
    at = open_data_page()
    labels = [b.label for b in at.get("download_button")]
    assert "Runs and points (CSV)" in labels and "Runs and points (Parquet)" in labels


@pytest.mark.parametrize("check", [True, False], ids=["check", "import"])
def test_upload_of_hostile_files_shows_each_refusal_not_an_exception(db, check):
    """A GPU count past DuckDB's INTEGER, JSON nested past Python's recursion limit and a lone
    surrogate: each file's row names its field (docs/formats/README.md, "Limits")."""
    good = (FIX / "h200-sweep-part1.csv").read_text()
    hostile = {"gpus.csv": good.replace(",8,8,measured,", ",3000000000,8,measured,", 1).encode(),
               "deep.json": b"[" * 5000 + b"]" * 5000,
               "surrogate.json": (ROOT / "tests" / "fixtures" / "vllm" / "metadata.json")
               .read_bytes().replace(b'"dsr1-fp4"', b'"\\ud800"')}
    with store.reading(db) as con:
        before = store.count_runs(con)
    at = open_data_page()
    uploader = at.get("file_uploader")[0]
    for name, data in hostile.items():
        uploader.upload(name, data, "text/plain")
    at.run()
    at.button(key="check" if check else "import").click().run()
    assert not at.exception
    results = next(d.value for d in at.dataframe if "Result" in d.value.columns)
    by_file = dict(zip(results.File, results.Result))
    assert by_file["gpus.csv"] == ("error: deployment: gpus_total: Input should be less than or "
                                   "equal to 1000000 (got 3000000000)")
    assert by_file["deep.json"] == ("error: json: nested too deeply to read (over about 1,000 "
                                    "levels)")
    assert by_file["surrogate.json"].startswith("error: label: holds a lone surrogate")
    assert any("0 file(s)" in w.value and "3 refused" in w.value for w in at.warning)
    with store.reading(db) as con:
        assert store.count_runs(con) == before


def test_an_import_that_changes_a_projection_s_anchors_stores_the_new_fit(full_db, tmp_path,
                                                                         monkeypatch):
    """The dashboard's import makes what depends on the new data before the next view
    (opx.answers.precompute): a measured point that beats Rubin's frontier at P90 is a new anchor, so
    the Explorer's fit for it is made and stored by the import, not by the next visitor."""
    import shutil
    from opx.store import stored_fits
    path = tmp_path / "opx.duckdb"
    shutil.copy(full_db, path)
    monkeypatch.setenv("OPX_DB", str(path))
    with store.reading(path) as con:
        before = stored_fits.keys(con)
    csv = ("hardware,model,workload,framework,precision,gpus_total,provenance,concurrency,"
           "interactivity_p90,tpot_p50_s,throughput_total_per_gpu\n"
           "vr-nvl72,deepseek-v4.1-flash,agentx,vllm,fp4,72,measured,64,600,0.0015,2600000\n")
    at = open_data_page()
    at.get("file_uploader")[0].upload("rubin.csv", csv.encode(), "text/csv")
    at.run()
    at.button(key="import").click().run()
    assert not at.exception
    with store.reading(path) as con:
        assert stored_fits.keys(con) - before, "the import stored a fit for the new anchors"
