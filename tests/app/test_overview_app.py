"""The Overview through Streamlit's AppTest: its table, its `at` control, a move from the
Explorer keeping the shared statistic, and an empty state that says why."""
import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT


@pytest.fixture
def app(seed_db, monkeypatch):
    monkeypatch.setenv("OPX_DB", str(seed_db))

    def make(**params):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
        for k, v in params.items():
            at.query_params[k] = v
        at.run()
        at.switch_page("app_pages/overview.py")
        return at.run()
    return make


def test_the_overview_lists_slices_at_the_chosen_interactivities(app):
    at = app(pct="mean")
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table.columns)[:3] == ["Slice · hardware", "20 tok/s/user", "50 tok/s/user"]
    assert "Score" in table.columns and "Peak" in table.columns
    assert any("·" in v and "×" in v for v in table["50 tok/s/user"])
    assert at.multiselect(key="at").value == [20.0, 50.0, 100.0, 200.0, 387.0]
    labels = [b.proto.label for b in at.get("download_button")]
    assert {"Brief (PDF, one page)", "Brief (HTML, offline)", "CSV data"} <= set(labels)


def test_at_from_the_link_sets_the_columns(app):
    at = app(pct="mean", at="75,150")
    assert not at.exception
    assert [c for c in at.dataframe[0].value.columns if c.endswith("tok/s/user")] == \
        ["75 tok/s/user", "150 tok/s/user"]


def test_a_statistic_without_two_systems_says_why_and_the_fix(app):
    at = app(pct="p99")
    assert not at.exception
    assert not at.dataframe
    assert any("choose another statistic" in i.value for i in at.info)


def test_sort_orders_the_lines_by_a_multiple_largest_first_baselines_last(app):
    at = app(pct="mean", sort="100")
    assert not at.exception
    assert at.selectbox(key="sort").value == "100"
    cells = list(at.dataframe[0].value["100 tok/s/user"])
    multiples = [float(c.split(" · ")[-1].rstrip("×")) for c in cells if " · " in c]
    assert multiples == sorted(multiples, reverse=True) and len(multiples) > 3
    assert all(" · " not in c for c in cells[len(multiples):])      # no multiple: last
    at.selectbox(key="sort").set_value("-score").run()
    assert at.query_params["sort"] in (["-score"], "-score")
    scores = [c.split("×")[0] for c in at.dataframe[0].value["Score"] if "× over" in c]
    assert [float(v) for v in scores] == sorted(float(v) for v in scores)
