"""The Simulate page through AppTest."""

import pytest
from streamlit.testing.v1 import AppTest

from opx import store

from opx.curves import metrics
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
    assert len(env) > 5 and env["Interactivity P50 (tok/s/user)"].notna().all()
    chart = at.get("vega_lite_chart")[0]
    assert "Held-out error" in chart.proto.spec and "simulated" in chart.proto.spec
    # the model's error beside the floor: the spread of the repeat sets in the same data
    from opx.answers.simulation import error_beside_floor
    from ui.text import escape_md
    floor = next(c.value for c in at.caption if "Repeated runs in this database" in c.value)
    assert floor == escape_md(error_beside_floor(db)) and "TTFT" in floor


def test_parameters_from_the_link_and_bad_ones(db):
    at = open_simulate(hw="b200", model="deepseek-r1", workload="1k1k", layout="TP8", mtp="1",
                       accept="7", kv="tape")
    assert not at.exception
    assert at.selectbox(key="sim_hw").value == "b200"
    assert at.text_input(key="sim_layout").value == "TP8"
    warnings = " ".join(w.value for w in at.warning)
    assert "accept" in warnings and "kv" in warnings
    env = at.dataframe[0].value
    assert set(env.Layout.str.replace(" MTP1", "")) == {"TP8"}


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


@pytest.fixture
def full_app_db(full_db, tmp_path, monkeypatch):
    import shutil
    path = tmp_path / "opx.duckdb"
    shutil.copy(full_db, path)
    monkeypatch.setenv("OPX_DB", str(path))
    return path


def test_simulate_opens_on_the_sessions_view_with_the_explorers_curve(full_app_db, catalog):
    """From the Explorer at P50 and 200 tok/s/user, the sidebar's Simulate opens on the first
    hardware, the statistic and the target, the built-in curve's MTP depth and the Explorer's
    anchors: its projection at the target is the Explorer's, to the digit shown."""
    from models import ViewState
    from opx.curves import metrics
    from opx.answers.explorer import explore
    from tests.app.test_journeys_app import go
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params.update({"pct": "p50", "target": "200"})
    at.run()
    assert not at.exception
    go(at, "app_pages/simulate.py")
    assert not at.exception
    assert at.selectbox(key="sim_hw").value == "vr-nvl72"
    assert at.radio(key="sim_pct").value == "p50" and at.number_input(key="sim_target").value == 200
    assert at.slider(key="sim_mtp").value == 1
    anchors = at.multiselect(key="sim_anchor").value
    assert len(anchors) == len(set(anchors)) >= 1
    view = explore(full_app_db, ViewState(pct="p50", target=200), catalog)
    rubin = next(s for s in view.summaries if s.hardware == "vr-nvl72")
    shown = {m.label: m.value for m in at.metric}
    total = metrics.y_metric("total")
    assert shown["This projection at 200 tok/s/user (P50)"] == \
        total.format(rubin.simulated_at_target.value)
    assert shown["At 200 tok/s/user (P50), as on every page"] == rubin.answer.cell(total)
    # the session's view is left as it was
    go(at, "app_pages/explorer.py")
    assert at.radio(key="pct").value == "p50" and at.number_input(key="target").value == 200


def test_anchor_runs_are_picked_by_readable_labels_each_once(full_app_db, catalog):
    from opx.answers.anchoring import anchor_candidates
    at = open_simulate(hw="b200", model="deepseek-r1", workload="1k1k")
    assert not at.exception
    labels = list(at.multiselect(key="sim_anchor").options)
    assert len(labels) >= 3 and len(set(labels)) == len(labels)
    assert all(label.startswith("B200 (HGX) · ") and " point" in label for label in labels)
    ids = list(anchor_candidates(full_app_db, "b200", "deepseek-r1", "1k1k", catalog).run_id)
    at.multiselect(key="sim_anchor").set_value(ids[:3]).run()
    assert not at.exception
    assert at.multiselect(key="sim_anchor").value == ids[:3]
    assert list(at.multiselect(key="sim_anchor").options) == labels     # the others stay
    address = at.query_params.get("anchor")
    assert sorted(address) == sorted(ids[:3])                         # each once in the link
    # a link that names a run twice holds it once
    at = open_simulate(hw="b200", model="deepseek-r1", workload="1k1k", anchor=[ids[0], ids[0]])
    assert at.multiselect(key="sim_anchor").value == [ids[0]]


def test_anchors_that_cannot_anchor_are_named(full_app_db):
    at = open_simulate(hw="b200", model="deepseek-r1", workload="1k1k",
                       anchor=["0123456789abcdef"])
    assert not at.exception
    assert any("anchor=0123456789abcdef" in w.value.replace("\\", "") and "left out" in w.value
               for w in at.warning)
    assert at.multiselect(key="sim_anchor").value == []


def test_another_system_picked_here_takes_its_own_anchors_without_a_warning(full_app_db,
                                                                             catalog):
    """The page opens anchored as the Explorer anchors Rubin; picking GB300 drops Rubin's runs
    quietly and anchors GB300's curve to the runs the Explorer anchors it to, so its projection at
    the target is the Explorer's."""
    from models import ViewState
    from opx.curves import metrics
    from opx.answers.explorer import explore
    from tests.app.test_journeys_app import go
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    go(at, "app_pages/simulate.py")
    assert at.selectbox(key="sim_hw").value == "vr-nvl72" and at.multiselect(key="sim_anchor").value
    at.selectbox(key="sim_hw").set_value("gb300-nvl72").run()
    assert not at.exception
    assert not [w.value for w in at.warning if "anchor=" in w.value], [w.value for w in at.warning]
    view = explore(full_app_db, ViewState(hw=("gb300-nvl72",)), catalog)
    fit = view.anchoring["gb300-nvl72"]
    assert at.multiselect(key="sim_anchor").value == list(dict.fromkeys(
        r["run_id"] for r in fit.residuals if r.get("fitted")))
    gb300 = next(s for s in view.summaries if s.hardware == "gb300-nvl72")
    shown = {m.label: m.value for m in at.metric}
    assert shown["This projection at 387 tok/s/user (P90)"] == \
        metrics.y_metric("total").format(gb300.simulated_at_target.value)
    # a link's anchor of another system is still named
    at = open_simulate(hw="gb300-nvl72", anchor=[at.multiselect(key="sim_anchor").value[0],
                                                "0123456789abcdef"])
    assert any("anchor=0123456789abcdef" in w.value.replace("\\", "") for w in at.warning)


def test_the_envelope_table_is_the_statistic_s_envelope(db):
    """At P90 the table lists the P90 envelope the chart draws, not the P50 one."""
    tables = {}
    for pct in ("p50", "p90"):
        at = open_simulate(hw="gb300-nvl72", model="deepseek-v4.1-flash", workload="agentx",
                           mtp="1", pct=pct)
        assert not at.exception
        title = next(s.value for s in at.subheader if s.value.startswith("Envelope"))
        assert title.startswith(f"Envelope at {pct.upper()}")
        x_title = metrics.interactivity(pct).title
        env = next(d.value for d in at.dataframe if x_title in d.value)
        x = env[x_title].to_numpy()
        y = env[metrics.y_metric("total").title].to_numpy()
        # a frontier at this statistic: no row is beaten on both axes by another
        assert not any(((x > xi) & (y > yi)).any() for xi, yi in zip(x, y))
        tables[pct] = set(zip(env.Layout, env.Concurrency))
    assert tables["p50"] != tables["p90"]


def _breakdown_of_the_first_point():
    from opx.catalog import load_catalog
    from opx.simulate.api import SimKnobs, simulate
    from ui import simulation_details
    frame = simulate("gb300-nvl72", "deepseek-r1", "1k1k", None, SimKnobs(),
                     load_catalog()).points_frame()
    first = frame.iloc[0]
    simulation_details.point_breakdown(frame, [{"layout": first.layout,
                                                "concurrency": first.concurrency}])


def test_a_clicked_point_shows_its_step_time_part_by_part():
    """The chart's selection names a layout and a concurrency; the breakdown is that point's."""
    at = AppTest.from_function(_breakdown_of_the_first_point, default_timeout=120).run()
    assert not at.exception
    assert "at concurrency" in at.subheader[0].value
    assert [m.label for m in at.metric] == ["Memory (ms per step)", "Compute (ms per step)",
                                            "Communication (ms per step)",
                                            "Overhead (ms per step)", "TPOT (ms)"]
    assert all(float(m.value) > 0 for m in at.metric[-1:])
    assert "Binding limit" in at.caption[0].value
