"""The cases of "one question, one number" as a user meets them in the app: the same figure at the
target on the Explorer, the Planner and Latency, one peak per hardware on a screen."""
import shutil

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

R1 = {"model": "deepseek-r1", "workload": "1k1k", "hw": ["gb200-nvl72", "b200"], "pct": "mean",
      "target": "58"}


@pytest.fixture
def run(full_db, tmp_path, monkeypatch):
    path = tmp_path / "opx.duckdb"
    shutil.copy(full_db, path)
    monkeypatch.setenv("OPX_DB", str(path))

    def go(page: str, **params):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
        at.switch_page(page)
        at.query_params.update(params)
        at.run()
        assert not at.exception
        return at
    return go


def frame(at, column: str):
    """The page's table that has `column`."""
    return next(d.value for d in at.dataframe if column in d.value.columns).set_index("Hardware")


def explorer_cells(at, target: str) -> dict:
    table = frame(at, f"At {target} tok/s/user (tok/s/GPU)")
    return dict(table[f"At {target} tok/s/user (tok/s/GPU)"])


def planner_cells(at) -> dict:
    table = frame(at, "At target (tok/s/GPU)")
    return dict(table["At target (tok/s/GPU)"])


def latency_cells(at, target: str) -> dict:
    table = frame(at, f"At {target} tok/s/user (tok/s/GPU)")
    return dict(table[f"At {target} tok/s/user (tok/s/GPU)"])


@pytest.mark.parametrize("params", [{"pct": "p50", "target": "387"},
                                    {"pct": "p50", "target": "200"},
                                    {"pct": "p90", "target": "100"},
                                    {"pct": "p90", "target": "387"}, R1])
def test_explorer_planner_and_latency_show_one_figure(run, params):
    target = params["target"]
    explorer = explorer_cells(run("app_pages/explorer.py", **params), target)
    assert explorer and all(explorer.values())
    assert planner_cells(run("app_pages/planner.py", **params)).items() <= explorer.items()
    assert latency_cells(run("app_pages/latency.py", **params), target) == explorer


def test_below_the_data_the_card_divides_the_at_least_figures(run):
    at = run("app_pages/explorer.py", pct="p90", target="100")
    assert [m.value for m in at.metric][0] == "58×"
    assert any(c.value.replace("\\", "").startswith("≥ 1.7M vs ≥ 29.3k tok/s/GPU")
               for c in at.caption)


def test_one_peak_per_hardware_on_a_screen(run):
    at = run("app_pages/explorer.py", hw=["vr-nvl72", "gb300-nvl72", "b200"])
    texts = [c.value.replace("\\", "") for c in at.caption]
    peaks = [t for t in texts if " vs 933k" in t]
    # both peak cards divide by GB300's one peak (its data's 933k), whatever the other side has
    assert len(peaks) == 2, texts
