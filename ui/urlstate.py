"""Keep a page's widgets and the address bar in step, through `models.ViewState`.

The URL is parsed with `ViewState.from_query` (validated, with a notice per dropped value) whenever
it differs from what this session last wrote: a fresh link, a reload or the browser's Back button.
The parsed state seeds the widgets' session-state keys, which are the URL parameter names. After
the widgets run, the state they hold is written back to the URL with defaults left out.
"""
from __future__ import annotations

import streamlit as st

from models import ViewState
from models.view import SlugResolver

_LAST_URL = "_opx_last_url"
_NOTICES = "_opx_notices"
_SAVED = "_opx_saved_view"        # (slug, title, query of the saved state) while it is shown
TARGET_SLIDER_MAX = 2500.0


def _current_query() -> dict[str, list[str]]:
    return {k: st.query_params.get_all(k) for k in st.query_params.keys()}


def _canonical(query: dict[str, list[str]]) -> tuple:
    return tuple(sorted((k, tuple(v)) for k, v in query.items()))


def seed_from_url(resolver: SlugResolver) -> list[str]:
    """Seed widget keys from the URL when the URL changed from outside; return its notices."""
    query = _current_query()
    if st.session_state.get(_LAST_URL) == _canonical(query):
        return []
    state, notices = ViewState.from_query(query, resolver)
    ss = st.session_state
    ss[_SAVED] = None
    if state.view:
        state, saved_notices = _open_saved_view(state, resolver)
        notices += saved_notices
    ss["model"], ss["workload"] = state.model, state.workload
    ss["hw"] = list(state.hw)
    ss["pct"], ss["y"], ss["xscale"] = state.pct, state.y, state.xscale
    ss["target"] = state.target
    ss["target_slider"] = min(max(state.target, 1.0), TARGET_SLIDER_MAX)
    ss["baseline"] = state.effective_baseline()
    ss["source"] = list(state.source)
    ss["runs"], ss["points"], ss["trend"] = state.runs, state.points, state.trend
    ss["a"], ss["b"] = state.a, state.b
    ss["ra"], ss["rb"] = state.ra, state.rb
    ss["conc"], ss["run"] = state.conc, state.run
    ss["ttft"], ss["sessions"], ss["tps"] = state.ttft, state.sessions, state.tps
    ss["price"], ss["power"] = state.price, state.power
    ss[_NOTICES] = notices
    return notices


def _open_saved_view(state: ViewState, resolver: SlugResolver) -> tuple[ViewState, list[str]]:
    from opx import saved_views
    from ui import data
    slug = state.view
    try:
        saved, missing = saved_views.load(data.database(), slug)
    except Exception as exc:   # the page itself reports an unreadable database
        return state.model_copy(update={"view": None}), [f"Saved view `{slug}` could not be read: {exc}"]
    if saved is None:
        return state.model_copy(update={"view": None}), [f"There is no saved view `{slug}`."]
    restored, notices = ViewState.from_query(saved.params(), resolver)
    st.session_state[_SAVED] = (saved.slug, saved.title, saved.query)
    st.session_state["_opx_saved_info"] = (
        f"Saved view “{saved.title}”, saved {saved.created_at:%Y-%m-%d %H:%M} on data version "
        f"{saved.data_version}.")
    if missing:
        notices.append(f"{len(missing)} of the {len(saved.run_ids)} runs this view showed when it "
                       "was saved have been deleted since; the chart shows what remains.")
    return restored.model_copy(update={"view": saved.slug}), notices


def saved_view_info() -> str | None:
    """A line describing the saved view on screen, while the view is unchanged."""
    return st.session_state.get("_opx_saved_info") if st.session_state.get(_SAVED) else None


def state_from_widgets() -> ViewState:
    """The state the widgets hold; fields a page does not show keep their seeded value."""
    ss = st.session_state
    d = ViewState()
    return ViewState(model=ss.get("model", d.model), workload=ss.get("workload", d.workload),
                     hw=tuple(ss.get("hw", d.hw)), pct=ss.get("pct", d.pct), y=ss.get("y", d.y),
                     target=float(ss.get("target", d.target)),
                     source=tuple(ss.get("source", ())), baseline=ss.get("baseline"),
                     xscale=ss.get("xscale", d.xscale), runs=bool(ss.get("runs", False)),
                     points=bool(ss.get("points", False)), trend=bool(ss.get("trend", False)),
                     a=ss.get("a", d.a), b=ss.get("b", d.b),
                     conc=ss.get("conc"), run=tuple(ss.get("run", ())), ttft=ss.get("ttft"),
                     sessions=ss.get("sessions"), tps=ss.get("tps"),
                     ra=ss.get("ra"), rb=ss.get("rb"), price=tuple(ss.get("price", ())),
                     power=tuple(ss.get("power", ())))


def write_url(state: ViewState) -> ViewState:
    """Put the state in the address bar (defaults left out) if it is not there already. While a
    saved view is shown unchanged the address stays its short `?view=<slug>` link; returns the
    state with `view` set accordingly."""
    from urllib.parse import urlencode
    saved = st.session_state.get(_SAVED)
    plain = state.model_copy(update={"view": None})
    if saved and urlencode(plain.to_query(), doseq=True) == saved[2]:
        state = plain.model_copy(update={"view": saved[0]})
        query = {"view": [saved[0]]}
    else:
        st.session_state[_SAVED] = None
        state = plain
        query = state.to_query()
    current = _current_query()
    if _canonical(query) != _canonical(current):
        st.query_params.from_dict(query)
    st.session_state[_LAST_URL] = _canonical(query)
    return state


def sync_target_from_slider() -> None:
    st.session_state["target"] = float(st.session_state["target_slider"])


def sync_slider_from_target() -> None:
    st.session_state["target_slider"] = min(max(float(st.session_state["target"]), 1.0),
                                            TARGET_SLIDER_MAX)


def keep_baseline_valid() -> None:
    """If the baseline hardware was removed from the selection, fall back to the default rule."""
    ss = st.session_state
    hw = tuple(ss.get("hw", ()))
    if ss.get("baseline") not in hw:
        ss["baseline"] = ViewState(hw=hw).effective_baseline()


# -- pages with their own state model (Simulate): the same pattern, keys prefixed -----------------

def seed_page_from_url(model_cls, resolver: SlugResolver, prefix: str) -> list[str]:
    """Seed `<prefix><field>` widget keys from the URL when it changed from outside."""
    query = _current_query()
    marker = f"{_LAST_URL}_{prefix}"
    if st.session_state.get(marker) == _canonical(query):
        return []
    state, notices = model_cls.from_query(query, resolver)
    for name in model_cls.model_fields:
        st.session_state[f"{prefix}{name}"] = getattr(state, name)
    return notices


def page_state_from_widgets(model_cls, prefix: str):
    return model_cls(**{name: st.session_state.get(f"{prefix}{name}")
                        for name in model_cls.model_fields
                        if st.session_state.get(f"{prefix}{name}") is not None})


def write_page_url(state, prefix: str) -> None:
    query = state.to_query()
    if _canonical(query) != _canonical(_current_query()):
        st.query_params.from_dict(query)
    st.session_state[f"{_LAST_URL}_{prefix}"] = _canonical(query)
