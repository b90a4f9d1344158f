"""The Explorer through Streamlit's AppTest: figures in the rendered table, URL parameters in and out."""
import pytest
from streamlit.testing.v1 import AppTest

from tests.app.address import shown_address
from tests.conftest import ROOT


@pytest.fixture
def app(seed_db, monkeypatch):
    monkeypatch.setenv("OPX_DB", str(seed_db))

    def make(**params):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
        for k, v in params.items():
            at.query_params[k] = v
        return at.run()
    return make


def _table(at):
    return at.dataframe[0].value


def test_default_view_is_the_seed_case(app):
    at = app()
    assert not at.exception
    assert at.selectbox(key="model").value == "deepseek-v4.1-flash"
    assert at.selectbox(key="workload").value == "agentx"
    assert at.multiselect(key="hw").value == ["vr-nvl72", "gb300-nvl72"]
    assert at.radio(key="pct").value == "p90" and at.number_input(key="target").value == 387
    table = _table(at).set_index("Hardware")
    target_col = next(c for c in table.columns if c.startswith("At 387"))
    assert table.loc["Vera Rubin NVL72", target_col] == "1.7M"
    assert table.loc["GB300 NVL72", target_col] == "29.3k"
    assert table.loc["Vera Rubin NVL72", "× GB300 NVL72 at target"] == "58×"
    assert table.loc["Vera Rubin NVL72", "× GB300 NVL72 at peak"] == "2.7×"
    assert table.loc["Vera Rubin NVL72", "Provenance at target"] == "preview"
    assert table.loc["GB300 NVL72", "Provenance at target"] == "derived"
    assert "vLLM (Inferact)" in table.loc["GB300 NVL72", "Source"]
    metrics = {m.value for m in at.metric}
    assert metrics == {"58×", "2.7×"}
    subheaders = " ".join(s.value for s in at.subheader)
    assert "Multiple at the target" in subheaders and "Multiple at peak" in subheaders
    assert len(at.get("vega_lite_chart")) == 1
    with_trend = app(trend="1")
    assert not with_trend.exception and len(with_trend.get("vega_lite_chart")) == 2
    # The share link states the whole shared view, defaults included, and nothing else.
    share = next(c.value for c in at.code if "model=" in c.value)
    assert share.endswith("/?model=deepseek-v4.1-flash&workload=agentx&hw=vr-nvl72"
                          "&hw=gb300-nvl72&pct=p90&y=total&target=387"), share


def test_query_parameters_set_the_view(app):
    at = app(model="deepseek-r1", workload="1k1k", hw=["gb200-nvl72", "gb300-nvl72"], pct="p50",
             target="50", baseline="gb200-nvl72", xscale="linear")
    assert not at.exception
    assert at.multiselect(key="hw").value == ["gb200-nvl72", "gb300-nvl72"]
    assert at.selectbox(key="baseline").value == "gb200-nvl72"
    assert at.select_slider(key="target_slider").value == 50
    table = _table(at).set_index("Hardware")
    at_col = next(c for c in table.columns if c.startswith("At 50"))
    # GB200 frontier: (43.3, 12660) and (91.0, 7698), PCHIP between them
    value = table.loc["GB200 NVL72", at_col]
    assert value.endswith("k") and 7.698 < float(value[:-1]) < 12.66
    assert table.loc["GB300 NVL72", at_col].startswith("GB300 NVL72 cannot reach 50 tok/s/user")
    assert "cannot reach 50" in table.loc["GB300 NVL72", "× GB200 NVL72 at target"]


def test_invalid_parameters_show_notices_and_fall_back(app):
    at = app(model="<script>alert(1)</script>", pct="p42", target="-3", hw=["h200", "nope"],
             y="watts", extra="1")
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning)
    for word in ("script", "p42", "-3", "nope", "watts", "extra"):
        assert word in warnings
    assert at.selectbox(key="model").value == "deepseek-v4.1-flash"
    assert at.multiselect(key="hw").value == ["h200"]
    assert shown_address(at)["pct"] == ["p90"]     # the invalid value replaced by the default


def test_controls_write_the_url(app):
    at = app()
    at.number_input(key="target").set_value(500).run()
    assert at.select_slider(key="target_slider").value == 500
    assert at.query_params["target"] == ["500"] or at.query_params["target"] == "500"
    table = _table(at).set_index("Hardware")
    assert table.loc["Vera Rubin NVL72", "× GB300 NVL72 at target"].startswith(
        "GB300 NVL72 cannot reach 500 tok/s/user")
    at.radio(key="pct").set_value("p50").run()
    assert not at.exception
    assert "p50" in str(at.query_params["pct"])


def test_removing_the_baseline_falls_back(app):
    at = app()
    at.multiselect(key="hw").set_value(["vr-nvl72", "b200"]).run()
    assert not at.exception
    assert at.selectbox(key="baseline").value == "vr-nvl72"
    at.multiselect(key="hw").set_value([]).run()
    assert not at.exception
    assert any("at least one hardware" in i.value for i in at.info)


def test_imported_runs_appear_at_once(seed_db, tmp_path, monkeypatch, catalog):
    import shutil

    from opx.store.importer import import_files
    from opx.ingest.core import IngestOptions
    db = tmp_path / "opx.duckdb"
    shutil.copy(seed_db, db)
    monkeypatch.setenv("OPX_DB", str(db))
    params = {"model": "qwen3-32b", "workload": "isl1000-osl500", "hw": "rtx-6000-pro",
              "pct": "p50", "target": "42.5", "y": "output"}
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert any("Unknown hardware" in w.value for w in at.warning)   # not imported yet
    import_files([ROOT / "tests" / "fixtures" / "opx-csv" / "unknown-names.csv"], IngestOptions(),
                 db, catalog)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception and not at.warning
    table = _table(at).set_index("Hardware")
    assert table.loc["rtx-6000-pro"].iloc[0] == "310"


def test_an_empty_chart_says_why_and_names_the_fix(app):
    at = app(model="deepseek-r1", workload="1k1k", hw="b200", pct="p99")
    assert not at.exception
    assert len(at.get("vega_lite_chart")) == 0
    info = " ".join(i.value for i in at.info)
    assert "No figure of these systems has a P99 interactivity" in info and "switch to mean" in info



def test_a_rerun_does_not_walk_the_whole_heap(app, seed_db):
    """Streamlit's collection of every generation after each run walked every object the server
    holds, 75-140 ms of each interaction; the project's server config turns it off (Python's own
    collector still runs), and a served app and AppTest read the same config. What the imports
    made is frozen once per process (ui/startup.py), before any view exists: a later session,
    run or page freezes nothing more, so nothing a session makes is kept from the collector."""
    import gc

    from streamlit import config

    from models import ViewState
    from opx.catalog import load_catalog
    from opx.answers.explorer import explore
    from ui import startup
    at = app()
    assert not at.exception
    assert config.get_option("runner.postScriptGC") is False
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    assert 0 < frozen <= startup.FROZEN     # frozen objects freed by their count leave it
    made_between_runs = explore(seed_db, ViewState(), load_catalog())
    at.number_input(key="target").set_value(250).run()
    at.switch_page("app_pages/compare.py").run()
    again = app(pct="p50")
    assert not at.exception and not again.exception
    assert gc.get_freeze_count() <= frozen
    # what was made after the freeze is still walked by the collector
    assert any(o is made_between_runs for o in gc.get_objects())
    # after an edit Streamlit's file watcher drops the app's modules and the next run imports
    # them again: that freezes nothing
    import importlib
    import sys
    del sys.modules["ui.startup"]
    again_imported = importlib.import_module("ui.startup")
    assert again_imported.FROZEN == startup.FROZEN
    assert gc.get_freeze_count() <= frozen
    assert any(o is made_between_runs for o in gc.get_objects())


def test_a_chart_kept_until_the_data_changes_still_gives_the_day_it_is_drawn(seed_db, monkeypatch):
    """The chart's last line is `opx, <day>`; the page keeps a chart until the data changes, and
    a new day draws it again."""
    import datetime as dt

    from models import ViewState
    from opx.publish import charts
    from ui import data
    monkeypatch.setenv("OPX_DB", str(seed_db))

    def lines(spec):      # the page's datasets are the Arrow bytes it sends
        from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
        return " ".join(convert_arrow_bytes_to_pandas_df(spec["datasets"]["opx_context"]).line)
    today = lines(data.explorer_spec(ViewState(), "/"))
    assert f"opx, {dt.date.today().isoformat()}" in today

    class Tomorrow(dt.date):
        @classmethod
        def today(cls):
            return dt.date(2030, 1, 2)
    monkeypatch.setattr(charts.dt, "date", Tomorrow)
    monkeypatch.setattr(data, "_today", lambda: "2030-01-02")
    assert "opx, 2030-01-02" in lines(data.explorer_spec(ViewState(), "/"))


def test_the_page_sends_the_chart_opx_builds(app, seed_db):
    """The page's chart reaches the browser as `opx.publish.charts` builds it: its spec, and each dataset
    as the Arrow bytes Streamlit makes of its rows (the still layers' are made once per view)."""
    import json

    from streamlit import dataframe_util

    from models import ViewState
    from opx.publish import charts
    from opx.catalog import load_catalog
    from opx.answers.explorer import explore
    at = app(target="250")
    assert not at.exception
    proto = at.get("vega_lite_chart")[0].proto
    catalog = load_catalog()
    view = explore(seed_db, ViewState(target=250), catalog)
    link = next(c.value for c in at.code if "model=" in c.value)
    want = charts.on_page(charts.with_target(
        charts.explorer_base_spec(view, catalog, charts.explorer_x_domain(view)), view, catalog,
        link=link, still=True))
    sent = {d.name: d.data.data for d in proto.datasets}
    assert sent == {name: dataframe_util.convert_anything_to_arrow_bytes(rows)
                    for name, rows in want.pop("datasets").items()}
    assert json.loads(proto.spec) == json.loads(json.dumps(want))


def test_a_cached_view_is_kept_until_its_data_changes():
    """Every view the pages cache is keyed on the data stamp, so it holds until the data
    changes or it is among the least recently used past its cap: no time limit, which made a
    user who came back after five minutes pay for the view again."""
    from streamlit.runtime.caching.cache_utils import CachedFunc

    from ui import coverage, data
    cached = {f"{m.__name__}.{name}": f for m in (data, coverage)
              for name, f in vars(m).items() if isinstance(f, CachedFunc)}
    assert "ui.data._explorer_view" in cached and len(cached) >= 10
    for name, f in cached.items():
        if name.endswith(".catalog"):
            continue                                   # a resource, read once per process
        assert f._info.ttl is None, name
        assert f._info.max_entries, name               # bounded by a count instead
