"""Share, saved views, read-only mode and the page/CLI chart identity, through AppTest."""
import json
import subprocess
import sys

import pytest
from streamlit.testing.v1 import AppTest

from opx import store

from opx.publish import charts
from tests.conftest import ROOT


@pytest.fixture
def db(app_db):
    return app_db


def run_app(page=None, **params):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if page:
        at.switch_page(page)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


@pytest.mark.parametrize("query", ["target=500&pct=p90", "model=deepseek-r1&workload=1k1k&hw=gb200-nvl72&pct=p50&target=50&runs=1"])
def test_the_cli_chart_spec_equals_the_pages(db, tmp_path, query):
    params = {k: v for k, v in (p.split("=") for p in query.split("&"))}
    at = run_app(**params)
    page_spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    out = tmp_path / "chart.vl.json"
    r = subprocess.run([sys.executable, "-m", "opx", "export", "/?" + query, "--format", "vl.json",
                        "-o", str(out), "--db", str(db)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    cli_spec = json.loads(out.read_text())
    # the page draws the export as `charts.on_page` sizes it for a browser, with what moves with
    # the target or the hardware read from datasets (`still_spec`): rendered with the rows the
    # page sent, it is the export pixel for pixel
    import pyarrow as pa
    import vl_convert as vlc
    assert "opx_context" in page_spec["title"]["subtitle"]["signal"]
    sent = {d.name: pa.ipc.open_stream(d.data.data).read_all().to_pylist()
            for d in at.get("vega_lite_chart")[0].proto.datasets}
    page = dict(page_spec, datasets=sent)
    assert vlc.vegalite_to_png(page, scale=1) == vlc.vegalite_to_png(charts.on_page(cli_spec),
                                                                    scale=1)


def test_save_a_view_and_open_its_short_link(db):
    at = run_app(target="500")
    at.text_input(key="save_view_title").input("Rubin at 500")
    at.button[0].click().run()
    assert not at.exception
    assert any(c.value == "/?view=rubin-at-500" for c in at.code)
    opened = run_app(view="rubin-at-500")
    assert not opened.exception
    assert opened.number_input(key="target").value == 500
    assert any("Saved view “Rubin at 500”" in i.value.replace("\\", "") for i in opened.info)
    assert dict(opened.query_params) in ({"view": "rubin-at-500"}, {"view": ["rubin-at-500"]})


def test_a_saved_view_whose_runs_were_deleted_says_so(db):
    at = run_app()
    at.text_input(key="save_view_title").input("seed")
    at.button[0].click().run()
    with store.writing(db) as con:
        run_id = con.execute("SELECT id FROM runs WHERE hardware = 'gb300-nvl72' "
                             "AND model = 'deepseek-v4.1-flash'").fetchone()[0]
        store.delete_run(con, run_id)
    opened = run_app(view="seed")
    assert not opened.exception
    assert any("deleted since" in w.value for w in opened.warning)


def test_read_only_mode_disables_every_write(db, monkeypatch):
    monkeypatch.setenv("OPX_READ_ONLY", "1")
    explorer = run_app()
    assert explorer.text_input(key="save_view_title").disabled
    assert explorer.button[0].disabled
    data = run_app("app_pages/data.py")
    assert not data.exception
    assert data.button(key="delete").disabled and data.button(key="import").disabled
    assert any("read-only" in i.value.replace("\\", "") for i in data.info)


def test_admin_token_gates_writes(db, monkeypatch):
    monkeypatch.setenv("OPX_ADMIN_TOKEN", "s3cret")
    at = run_app()
    assert at.text_input(key="save_view_title").disabled
    at.text_input(key="admin_token").input("wrong").run()
    assert at.text_input(key="save_view_title").disabled
    at.text_input(key="admin_token").input("s3cret").run()
    assert not at.text_input(key="save_view_title").disabled
