"""One question, one number: over views drawn from what the database holds, each hardware's figure
at the target is the resolver's, exactly, on the Explorer's table and multiples, Compare's sides,
the Planner's sizing, Latency's table and every page's JSON export."""
import json
import math
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models import ViewState
from opx import store
from opx.curves import metrics
from opx.answers.explorer import explore
from opx.answers.latency import answers_table, latency
from opx.links import parse_link
from opx.answers.planner import deployed, explorer_state, plan
from opx.publish.render import render_link

EXAMPLES = int(os.environ.get("OPX_PROPERTY_EXAMPLES", "24"))
PCTS = ("mean", "p50", "p90", "p99")
METRICS = ("total", "output", "usd_per_mtok")


@pytest.fixture(scope="module")
def held(full_db):
    """What the database holds: per (model, workload), its hardware, frameworks and, per
    statistic, the interactivities its points state (targets are drawn at, between, below and
    above them)."""
    cols = ", ".join(f"list(DISTINCT m.interactivity_{q}) FILTER "
                     f"(WHERE m.interactivity_{q} > 0) AS x_{q}" for q in PCTS)
    with store.reading(full_db) as con:
        rows = con.execute(f"""
            SELECT r.model, r.workload, list(DISTINCT r.hardware ORDER BY r.hardware) AS hw,
                   list(DISTINCT lower(r.framework) ORDER BY lower(r.framework)) AS frameworks,
                   {cols}
            FROM runs r JOIN point_metrics m ON m.run_id = r.id
            GROUP BY ALL ORDER BY r.model, r.workload""").fetchall()
    return [(m, w, hw, fw, {q: sorted(x or []) for q, x in zip(PCTS, xs)})
            for m, w, hw, fw, *xs in rows]


@st.composite
def views(draw, held):
    # the seed's model (published, measured and simulated figures) half the time
    seed = [h for h in held if h[0] == "deepseek-v4.1-flash"]
    model, workload, hw, frameworks, xs = draw(st.sampled_from(seed) if seed and draw(
        st.booleans()) else st.sampled_from(held))
    chosen = draw(st.lists(st.sampled_from(hw), min_size=1, max_size=min(3, len(hw)),
                           unique=True))
    pct = draw(st.sampled_from([q for q in PCTS if xs[q]] or list(PCTS)))
    known = xs[pct] or [387.0]
    i = draw(st.integers(0, len(known) - 1))
    how = draw(st.sampled_from(("at", "between", "below", "above", "anywhere")))
    x = known[i]
    if how == "between" and i + 1 < len(known):
        x = math.sqrt(known[i] * known[i + 1])
    elif how == "below":
        x = known[0] * draw(st.floats(0.2, 0.95))
    elif how == "above":
        x = known[-1] * draw(st.floats(1.05, 3.0))
    elif how == "anywhere":
        x = math.exp(draw(st.floats(math.log(known[0] / 2), math.log(known[-1] * 1.5))))
    target = min(max(x if how == "at" else float(f"{x:.6g}"), 0.1), 100_000.0)
    state = ViewState(model=model, workload=workload, hw=tuple(chosen), pct=pct, target=target,
                      y=draw(st.sampled_from(METRICS)))
    if draw(st.booleans()):
        state = state.model_copy(update={"framework": (draw(st.sampled_from(frameworks)),)})
    if draw(st.booleans()):
        state = state.model_copy(update={"source": ("measured", "derived", "published",
                                                    "preview", "interpolated")})
    return state


def link(path: str, state: ViewState) -> str:
    from opx.links import build_link
    return build_link(path, state)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_page_gives_the_resolvers_figure(full_db, catalog, held, data):
    state = data.draw(views(held))
    y = metrics.y_metric(state.y)
    view = explore(full_db, state, catalog)
    answers = {s.hardware: s.answer for s in view.summaries}
    base = next(s for s in view.summaries if s.hardware == view.baseline)

    # the Explorer: its table's cell, and the figures each multiple divides
    table = view.table().set_index("Hardware")
    at_col = next(c for c in table.columns if c.startswith("At "))
    for s in view.summaries:
        assert table.loc[s.name, at_col] == s.answer.cell(y)
        m = s.multiple_at_target
        if m is not None and m.value is not None:
            assert (m.a.value, m.b.value) == (s.answer.value, base.answer.value)
            assert m.value == s.answer.value / base.answer.value

    # every page's JSON export: the same figure, to the last bit
    explorer = json.loads(render_link(parse_link(link("/", state)), "json", full_db, catalog))
    assert {h["hardware"]: h["at_target"] for h in explorer["hardware"]} == \
        {hw: a.value for hw, a in answers.items()}
    if len(state.hw) >= 2:
        a, b = state.hw[0], state.hw[1]
        compare = json.loads(render_link(parse_link(link("/compare", state.model_copy(
            update={"a": a, "b": b}))), "json", full_db, catalog))
        assert (compare["a"]["at_target"], compare["b"]["at_target"]) == \
            (answers[a].value, answers[b].value)
        if compare["multiple_at_target"] is not None:
            assert compare["multiple_at_target"] == answers[a].value / answers[b].value
    lat = latency(full_db, state, catalog)
    cells = answers_table(lat).set_index("Hardware")
    for s in view.summaries:
        assert cells.loc[s.name].iloc[0] == s.answer.cell(y)
    lat_json = json.loads(render_link(parse_link(link("/latency", state)), "json", full_db,
                                      catalog))
    assert {h["hardware"]: h["at_target"] for h in lat_json["hardware"]} == \
        {hw: a.value for hw, a in answers.items()}

    # the Planner sizes with exactly the figure in total tok/s/GPU, and deploys its configuration
    totals = {s.hardware: s.answer for s in explore(full_db, explorer_state(state),
                                                    catalog).summaries}
    planned = plan(full_db, state.model_copy(update={"sessions": 1000.0}), catalog)
    for row in planned.rows.itertuples():
        a = totals[row.hardware_slug]
        assert row.total_per_gpu == a.value
        assert row.gpus_per_deployment == deployed(a).gpus_total
    excluded = {name for name, _ in planned.excluded}
    for a in totals.values():
        assert (a.name in excluded) == (not a.ok) or not planned.output_share
    if state.y == "total":
        assert {hw: a.value for hw, a in totals.items()} == \
            {hw: a.value for hw, a in answers.items()}


def test_simulate_opens_on_the_explorers_projection(full_db, catalog):
    """From the session's view, Simulate's projection at the target is the Explorer's, and the
    figure it names for the hardware is the resolver's."""
    from opx.answers.simulation import session_start, simulate_view
    for state in (ViewState(pct="p50", target=200), ViewState(target=100),
                  ViewState(hw=("gb300-nvl72",), pct="p50", target=300)):
        start = session_start(full_db, state, catalog)
        assert start.hw == state.hw[0] and start.mtp == 1 and start.anchor
        sim = simulate_view(full_db, start, catalog)
        explorer = next(s for s in explore(full_db, state, catalog).summaries
                        if s.hardware == start.hw)
        assert sim.projection.value == explorer.simulated_at_target.value
        assert sim.view.summaries[0].answer.value == explorer.answer.value
        out = json.loads(render_link(parse_link(
            "/simulate?" + "&".join(f"{k}={v}" for k, vs in start.to_query().items()
                                    for v in vs)), "json", full_db, catalog))
        assert out["projection"]["at_target"] == sim.projection.value
        assert out["hardware"][0]["at_target"] == explorer.answer.value


def test_every_coverage_row_opens_a_view_that_answers(full_db, catalog):
    """A coverage row opens a view whose baseline has a figure at the statistic it opens at and,
    where two systems have data there, a multiple at the target."""
    from opx.answers.coverage import coverage
    rows = coverage(full_db, catalog)
    assert len(rows) > 10
    answered = 0
    for row in rows.itertuples():
        view = explore(full_db, parse_link(row.link).state, catalog)
        base = next(s for s in view.summaries if s.hardware == view.baseline)
        with_data = [s for s in view.summaries if s.answer.ok and s.answer.kind == "data"]
        if not with_data:
            continue                        # "simulated only", "no interactivity stated"
        assert base.answer.ok and base.answer.kind == "data", row.link
        if len(with_data) >= 2:
            assert any(s.multiple_at_target is not None and s.multiple_at_target.value
                       for s in view.summaries), row.link
            answered += 1
    assert answered >= 5
