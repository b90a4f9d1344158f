"""Page switches keep the session's view: AppTest moves between pages as the sidebar does (the
address is cleared) and checks that every page opens on the choices made on the last one."""
import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

PAGES = ["app_pages/compare.py", "app_pages/planner.py", "app_pages/latency.py",
         "app_pages/simulate.py", "app_pages/data.py", "app_pages/explorer.py"]


@pytest.fixture
def at(seed_db, monkeypatch):
    monkeypatch.setenv("OPX_DB", str(seed_db))
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)


def go(at, page):
    """What a sidebar click does: another page, with the address bar cleared."""
    at.switch_page(page)
    for key in list(at.query_params):
        del at.query_params[key]
    return at.run()


def shared(at):
    ss = at.session_state
    return (ss["model"], ss["workload"], tuple(ss["hw"]), ss["pct"], ss["target"])


def test_the_seed_view_survives_every_page(at):
    at.run()
    assert not at.exception
    assert [m.value for m in at.metric][:2] == ["58×", "2.7×"]
    for page in PAGES:
        go(at, page)
        assert not at.exception, page
        if page.endswith(("explorer.py", "compare.py")):
            assert [m.value for m in at.metric][:2] == ["58×", "2.7×"], page
    assert shared(at) == ("deepseek-v4.1-flash", "agentx", ("vr-nvl72", "gb300-nvl72"), "p90", 387.0)


@pytest.mark.parametrize("first", ["app_pages/explorer.py", "app_pages/compare.py",
                                   "app_pages/planner.py"])
def test_a_choice_made_on_one_page_opens_on_the_next(at, first):
    go(at, first)
    at.number_input(key="target").set_value(200.0).run()
    at.radio(key="pct").set_value("p50").run() if first != "app_pages/planner.py" else \
        at.radio(key="pct").set_value("p50").run()
    assert not at.exception
    for page in PAGES:
        go(at, page)
        assert not at.exception, page
        assert at.session_state["_opx_query"]["target"] == ["200"], page
        assert at.session_state["_opx_query"]["pct"] == ["p50"], page
    go(at, "app_pages/compare.py")
    assert at.number_input(key="target").value == 200.0
    assert at.radio(key="pct").value == "p50"


def test_hardware_chosen_on_the_explorer_is_compared(at):
    at.run()
    at.multiselect(key="hw").set_value(["gb200-nvl72", "gb300-nvl72"]).run()
    go(at, "app_pages/compare.py")
    assert (at.selectbox(key="a").value, at.selectbox(key="b").value) == ("gb200-nvl72",
                                                                          "gb300-nvl72")
    go(at, "app_pages/latency.py")
    assert tuple(at.multiselect(key="hw").value) == ("gb200-nvl72", "gb300-nvl72")


def test_page_only_choices_stay_with_their_page(at):
    go(at, "app_pages/planner.py")
    at.number_input(key="sessions").set_value(10_000.0).run()
    go(at, "app_pages/explorer.py")
    assert "sessions" not in at.query_params
    go(at, "app_pages/planner.py")
    assert at.number_input(key="sessions").value == 10_000.0


def test_a_link_still_decides_on_a_fresh_session(at):
    at.switch_page("app_pages/compare.py")
    at.query_params["target"] = "100"
    at.query_params["a"] = "gb200-nvl72"
    at.run()
    assert not at.exception
    assert at.number_input(key="target").value == 100.0
    assert at.selectbox(key="a").value == "gb200-nvl72"


def test_a_simulate_link_decides_the_session_and_its_anchors_follow_the_system(at):
    """A Simulate link's model, workload and target become the session's (the next page opens
    on them); the statistic it does not state stays the session's. Back on Simulate after the
    model changed elsewhere, the anchors are the new system's, picked as the Explorer anchors
    it, without notices about the old ones."""
    at.switch_page("app_pages/simulate.py")
    for k, v in (("hw", "b200"), ("model", "deepseek-r1"), ("workload", "1k1k"),
                 ("target", "40")):
        at.query_params[k] = v
    at.run()
    assert not at.exception and not at.warning
    assert at.session_state["sim_model"] == "deepseek-r1"
    go(at, "app_pages/explorer.py")
    assert not at.exception
    assert (at.session_state["model"], at.session_state["workload"],
            at.session_state["target"], at.session_state["pct"]) == ("deepseek-r1", "1k1k",
                                                                     40.0, "p90")
    at.selectbox(key="model").set_value("deepseek-v3").run()
    go(at, "app_pages/simulate.py")
    assert not at.exception
    assert at.session_state["sim_model"] == "deepseek-v3"
    assert not [w.value for w in at.warning if "anchor" in w.value]
    # a link that names runs of another system still says it left them out
    at.switch_page("app_pages/simulate.py")
    at.query_params["anchor"] = "0123456789abcdef"
    at.run()
    assert any("0123456789abcdef" in w.value for w in at.warning)


@pytest.mark.parametrize("page", ["app_pages/explorer.py", "app_pages/compare.py",
                                  "app_pages/planner.py", "app_pages/latency.py",
                                  "app_pages/simulate.py"])
def test_a_page_left_for_data_opens_again_on_the_session_s_view(at, page):
    """Data shows no view: back from it by the sidebar, the page left for it opens on the
    session's view (Streamlit forgot its widgets while Data ran), not on empty defaults."""
    def view():
        return dict(at.session_state["_opx_query"]) if "_opx_query" in at.session_state else {}
    go(at, page)
    before = view()
    go(at, "app_pages/data.py")
    go(at, page)
    assert not at.exception
    assert view() == before
    if page.endswith(("explorer.py", "latency.py")):
        assert tuple(at.multiselect(key="hw").value) == ("vr-nvl72", "gb300-nvl72")
    if page.endswith("simulate.py"):
        assert at.session_state["sim_accept"] > 0 and at.session_state["sim_target"] == 387.0
    elif not page.endswith("latency.py"):
        assert at.number_input(key="target").value == 387.0


def test_back_to_a_simulate_address_decides_its_model(at):
    """Simulate's address states its system and question even at their defaults, so Back to an
    earlier Simulate entry (its address read again) brings the session back to its model."""
    from tests.app.address import shown_address
    go(at, "app_pages/simulate.py")
    first = shown_address(at)
    assert first["model"] == ["deepseek-v4.1-flash"] and "target" in first
    at.selectbox(key="sim_model").set_value("deepseek-r1").run()
    assert at.session_state["_opx_query"]["model"] == ["deepseek-r1"]
    for key in list(at.query_params):                   # Back: the first entry's address
        del at.query_params[key]
    for key, values in first.items():
        at.query_params[key] = values
    at.run()
    assert not at.exception and at.session_state["sim_model"] == "deepseek-v4.1-flash"
    go(at, "app_pages/explorer.py")
    assert at.session_state["model"] == "deepseek-v4.1-flash"


def test_back_to_simulate_leaves_a_statistic_it_cannot_take_to_the_session(at):
    """At the mean the session's statistic is not one Simulate gives: the page falls back to
    P50 without writing it, so Back to that entry leaves the session at the mean."""
    from tests.app.address import shown_address
    go(at, "app_pages/explorer.py")
    at.radio(key="pct").set_value("mean").run()
    go(at, "app_pages/simulate.py")
    entry = shown_address(at)
    assert at.session_state["sim_pct"] == "p50" and "pct" not in entry
    for key in list(at.query_params):                   # Back to that entry
        del at.query_params[key]
    for key, values in entry.items():
        at.query_params[key] = values
    at.run()
    go(at, "app_pages/explorer.py")
    assert at.session_state["pct"] == "mean"
