"""What a link shows: its saved view opened, the Explorer view behind it, and every chart it
shows, built by the builders its page uses. The exports, the briefs and the embed all read the
chart here (`link_chart`), so a file is what the link shows."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

from models import Catalog, ViewState, pct_label
from models.pages import PAGE_BY_PATH
from models.view import format_number
from opx.answers.explorer import ExplorerView, explore
from opx.curves import metrics
from opx.errors import OpxError
from opx.links import Link
from opx.publish.charts import compare_chart, explorer_chart, explorer_export_chart


def open_link(link: Link, db: Path, resolver=None) -> Link:
    """What a link shows, as the CLI's export and the embed read it: its saved view opened
    (`view=<slug>`), and a run that no longer exists (`ra`, `rb`) replaced by the hardware; each
    value that cannot be honoured is named in a notice, as the pages do."""
    from opx import store
    from opx.store import saved_views
    notices = list(link.notices)
    state, path = link.state, link.path
    if link.sim is None and state.view:
        state, more, saved = saved_views.restore(db, state, resolver)
        notices += more
        if saved is not None and saved.path in PAGE_BY_PATH:
            path = saved.path
    if PAGE_BY_PATH.get(path) == "compare" and (state.ra or state.rb):
        with store.reading(db) as con:
            gone = [r for r in (state.ra, state.rb) if r and not store.run_exists(con, r)]
        if gone or not (state.ra and state.rb):
            notices += [f"Run `{r[:40]}` in the link no longer exists; comparing the hardware "
                        "instead." for r in gone]
            if not gone:
                notices.append("A run comparison needs both `ra` and `rb`; comparing the "
                               "hardware instead.")
            state = state.model_copy(update={"ra": None, "rb": None})
    return Link(path, state, notices, link.sim)


def compare_state(state: ViewState) -> ViewState:
    """/compare shows A and B with B as the baseline (enough of Compare for its export)."""
    return state.model_copy(update={"hw": (state.a, state.b), "baseline": state.b})


def view_for(link: Link, db: Path, catalog: Catalog) -> ExplorerView:
    if link.page not in ("explorer", "compare"):
        raise OpxError("LINK", "path", f"`{link.path}` has no Explorer view")
    state = compare_state(link.state) if link.page == "compare" else link.state
    return explore(db, state, catalog)


def chart_spec(view: ExplorerView, catalog: Catalog, link_text: str,
               as_of: dt.date | None = None) -> dict:
    """The Explorer's chart alone (see `chart_for` for everything a link shows)."""
    return explorer_chart(view, catalog, link=link_text, as_of=as_of).to_dict()


def chart_for(link: Link, view: ExplorerView, db: Path, catalog: Catalog, link_text: str,
              as_of: dt.date | None = None):
    """Every chart `link` shows, stacked in one, built by the builders its page uses: Compare's
    Explorer chart over its multiple across interactivity (`opx.answers.compare.multiple_curve`), the
    Explorer's chart over its value over time when the link asks for it (`trend=1`)."""
    state = view.state
    if link.page == "compare":
        from opx.answers import compare
        side_a, side_b, _ = compare.sides_for(db, view, catalog)
        curve = compare.multiple_curve(side_a, side_b, metrics.y_metric(state.y))
        return compare_chart(view, catalog, curve, side_a.name, side_b.name, link_text,
                             as_of, with_explorer=not (state.ra and state.rb))
    trend = None
    if state.trend:
        from opx.answers.over_time import over_time
        trend = over_time(db, state, catalog)
    return explorer_export_chart(view, catalog, link_text, as_of, trend)


# At 11 px a subtitle character is under 5.8 px wide: 128 of them stay inside the 760 px chart.
PLANNER_SUBTITLE_CHARS = 128


def _wrap(text: str, width: int = PLANNER_SUBTITLE_CHARS) -> list[str]:
    """Lines of at most `width` characters, broken at spaces or, inside a link, after ? and &."""
    import re
    lines, line = [], ""
    for token in re.split(r"(?<=[ ?&])", text):
        if line and len(line) + len(token.rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        line += token
    return lines + ([line.rstrip()] if line.strip() else [])


def planner_context(plan, catalog: Catalog, link_text: str,
                    as_of: dt.date | None = None) -> tuple[str, list[str]]:
    s = plan.state
    demand = (f"{s.sessions:,.0f} concurrent sessions" if s.sessions else
              f"{s.tps:,.0f} output tok/s" if s.tps else "none given")
    title = (f"Fleet plan: {catalog.model_name(s.model)}, {catalog.workload_name(s.workload)}, "
             f"≥ {format_number(s.target)} tok/s/user {pct_label(s.pct)}"
             + (f", TTFT ≤ {s.ttft:g} s" if s.ttft else ""))
    sub = [f"Demand: {demand}. Per system, its figure at the target (the Explorer's, in total "
           "tok/s/GPU) and the configuration behind it.",
           f"opx, {(as_of or dt.date.today()).isoformat()}"
           + (f" · {link_text}" if link_text else "")]
    # lines of at most PLANNER_SUBTITLE_CHARS, so a long link never widens or clips the chart
    return title, [part for line in sub for part in _wrap(line)]


def planner_sizing_text(plan, catalog: Catalog) -> str:
    """How the plan sized each system, for the page's caption and the JSON export."""
    s = plan.state
    w = catalog.workloads.get(s.workload)
    share = (f"{w.osl:,} / ({w.isl:,} + {w.osl:,}) = {plan.output_share:.3%}"
             f" for {w.name}" if w and plan.output_share else
             f"unknown for `{s.workload}` (not in the workload catalog)")
    return ("Each system is sized with its figure at the target, the one the Explorer, Compare "
            "and every export show (total tok/s/GPU), and deploys the configuration behind it (of "
            "two interpolated points, the faster one). Output tok/s per GPU is that figure times "
            f"the workload's output share OSL / (ISL + OSL) ({share}); each session consumes the "
            "interactivity the figure sits at in output tok/s; GPUs come in whole deployments of "
            "the configuration. A TTFT limit is checked against that configuration's TTFT.")


def link_chart(link: Link, db: Path, catalog: Catalog, link_text: str,
               as_of: dt.date | None = None, view: ExplorerView | None = None, plan=None):
    """The chart `link` shows, as its page draws it: the one renderer behind the chart exports,
    the brief and the embed view (`/embed`). `view` / `plan`: already computed for this link."""
    if link.page == "planner":
        from opx.publish.charts import planner_chart
        from opx.answers.planner import plan as make_plan
        the_plan = plan if plan is not None else make_plan(db, link.state, catalog)
        title, sub = planner_context(the_plan, catalog, link_text, as_of)
        return planner_chart(the_plan.rows, title, sub, catalog)
    view = view if view is not None else view_for(link, db, catalog)
    return chart_for(link, view, db, catalog, link_text, as_of)
