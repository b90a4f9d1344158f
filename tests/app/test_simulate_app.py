"""The Simulate page through AppTest."""

import pytest
from streamlit.testing.v1 import AppTest

from opx import store
from tests.conftest import ROOT


@pytest.fixture
def db(app_db):
    return app_db


def open_simulate(**params):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("app_pages/simulate.py")
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def test_default_simulation_shows_an_envelope_with_its_error(db):
    at = open_simulate()
    assert not at.exception
    env = at.dataframe[0].value
    assert len(env) > 5 and env.interactivity_p50.notna().all()
    chart = at.get("vega_lite_chart")[0]
    assert "Held-out error" in chart.proto.spec and "simulated" in chart.proto.spec


def test_parameters_from_the_link_and_bad_ones(db):
    at = open_simulate(hw="b200", model="deepseek-r1", workload="1k1k", layout="TP8", mtp="1",
                       accept="7", kv="tape")
    assert not at.exception
    assert at.selectbox(key="sim_hw").value == "b200"
    assert at.text_input(key="sim_layout").value == "TP8"
    warnings = " ".join(w.value for w in at.warning)
    assert "accept" in warnings and "kv" in warnings
    env = at.dataframe[0].value
    assert set(env.layout.str.replace(" MTP1", "")) == {"TP8"}


def test_an_impossible_request_is_an_error_not_an_exception(db):
    at = open_simulate(hw="h100", model="deepseek-r1", workload="1k1k", gpus="8")
    assert not at.exception
    assert at.error and "Cannot simulate" in at.error[0].value


def test_save_writes_simulated_runs(db):
    at = open_simulate(hw="b200", model="deepseek-r1", workload="1k1k", layout="TP8")
    at.button(key="save_simulation").click().run()
    assert not at.exception
    with store.reading(db) as con:
        n = con.execute("SELECT count(*) FROM runs WHERE provenance = 'simulated'").fetchone()[0]
    assert n >= 1


def test_anchor_runs_fit_the_curve_and_saved_runs_name_them(db):
    with store.reading(db) as con:
        rid = con.execute("SELECT id FROM runs WHERE hardware = 'gb300-nvl72' AND workload = "
                          "'agentx' AND provenance = 'derived'").fetchone()[0]
    at = open_simulate(hw="gb300-nvl72", model="deepseek-v4.1-flash", workload="agentx",
                       mtp="1", anchor=rid)
    assert not at.exception
    assert at.multiselect(key="sim_anchor").value == [rid]
    assert at.subheader[0].value.startswith("Anchoring: fitted parameters")
    params, residuals = at.dataframe[0].value, at.dataframe[1].value
    assert set(params.parameter) == {"overhead", "memory", "compute", "spread"}
    assert residuals.within.all()
    spec = at.get("vega_lite_chart")[0].proto.spec
    assert '"area"' in spec and "Anchored to" in spec
    at.button(key="save_simulation").click().run()
    assert not at.exception
    with store.reading(db) as con:
        named = con.execute("SELECT count(*) FROM runs WHERE provenance = 'simulated' AND "
                            "json_extract_string(meta, '$.anchors') = ?", [rid]).fetchone()[0]
    assert named >= 1
