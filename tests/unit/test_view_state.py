import math

from hypothesis import given, settings
from hypothesis import strategies as st

from models import PERCENTILES, PROVENANCES, Y_METRICS, ViewState


def test_defaults_are_the_seed_case_and_leave_the_url_empty():
    s = ViewState()
    assert (s.model, s.workload, s.hw, s.pct, s.y, s.target) == (
        "deepseek-v4.1-flash", "agentx", ("vr-nvl72", "gb300-nvl72"), "p90", "total", 387.0)
    assert s.effective_baseline() == "gb300-nvl72"
    assert s.to_query() == {}


def test_invalid_values_are_dropped_with_a_notice(catalog):
    state, notices = ViewState.from_query(
        {"model": ["nope"], "pct": ["p95"], "y": ["power"], "target": ["inf"],
         "hw": ["h200", "warp-drive"], "source": ["measured", "rumour"], "runs": ["maybe"],
         "zzz": ["1"]}, catalog)
    assert state.model == "deepseek-v4.1-flash"
    assert state.pct == "p90" and state.y == "total" and state.target == 387.0
    assert state.hw == ("h200",)
    assert state.source == ("measured",)
    joined = " ".join(notices)
    for word in ("nope", "p95", "power", "inf", "warp-drive", "rumour", "maybe", "zzz"):
        assert word in joined
    assert len(notices) == 8


def test_aliases_map_onto_catalog_slugs(catalog):
    state, notices = ViewState.from_query({"hw": ["gb300", "VR200"],
                                           "model": ["deepseek-ai/DeepSeek-V4-Pro"]}, catalog)
    assert state.hw == ("gb300-nvl72", "vr-nvl72")
    assert state.model == "deepseek-v4-pro"
    assert notices == []


def test_empty_hardware_selection_round_trips():
    s = ViewState(hw=())
    assert s.to_query() == {"hw": ["none"]}
    assert ViewState.from_query(s.to_query())[0].hw == ()


hw_slugs = st.sampled_from(["vr-nvl72", "gb300-nvl72", "gb200-nvl72", "b300", "b200", "h200",
                            "h100", "mi355x"])
states = st.builds(
    ViewState,
    model=st.sampled_from(["deepseek-v4.1-flash", "deepseek-r1", "gpt-oss-120b"]),
    workload=st.sampled_from(["agentx", "1k1k", "8k1k"]),
    hw=st.lists(hw_slugs, unique=True, max_size=5).map(tuple),
    pct=st.sampled_from(PERCENTILES), y=st.sampled_from(Y_METRICS),
    target=st.floats(min_value=0.1, max_value=100_000, allow_nan=False),
    source=st.lists(st.sampled_from(PROVENANCES), unique=True, max_size=3).map(tuple),
    xscale=st.sampled_from(["log", "linear"]), runs=st.booleans(), points=st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(states)
def test_every_state_round_trips_through_the_url(state):
    back, notices = ViewState.from_query(state.to_query())
    assert notices == []
    assert back.model_dump(exclude={"baseline", "target"}) == state.model_dump(
        exclude={"baseline", "target"})
    assert math.isclose(back.target, state.target, rel_tol=1e-12)
    assert back.effective_baseline() == state.effective_baseline()


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["model", "hw", "pct", "y", "target", "source", "runs",
                                         "xscale", "baseline", "view", "junk"]),
                       st.lists(st.text(max_size=12), max_size=3)))
def test_any_query_parses_without_an_exception(params):
    state, notices = ViewState.from_query(params)
    assert isinstance(state, ViewState)
    assert all(isinstance(n, str) for n in notices)


def test_the_link_limits_are_streamlits():
    """The notice for a link too long to read quotes the limits Streamlit applies."""
    from streamlit.runtime.state import query_params as qp
    from models.view import LINK_MAX_KIB, LINK_MAX_VALUES
    assert LINK_MAX_VALUES == qp.CLIENT_STATE_QUERY_STRING_MAX_FIELDS
    assert LINK_MAX_KIB * 1024 == qp.CLIENT_STATE_QUERY_STRING_MAX_LENGTH
