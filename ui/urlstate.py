"""One view state for the whole session, kept in step with each page's widgets and address bar.

The session's view lives in `st.session_state` under a key no widget owns (`_opx_query`: the
state as query parameters, defaults left out), so it survives page switches, whose widgets
Streamlit forgets, and sidebar navigation, which clears the address bar. Each page run:

1. `seed_from_url(page)`: when the page was just entered or the address changed from outside
   (a fresh link, reload, Back or Forward), work out the state and write it into the widgets' keys,
   which are the field names of `models.ViewState`:
   - an address with no view parameters (the sidebar cleared it) opens the session's view;
   - otherwise the address decides this page's fields and the shared ones; other pages' fields
     keep the session's values.
2. The page draws its widgets; `state_from_widgets()` reads them back over the seeded state.
3. `write_url(state)` puts the page's address (`ViewState.to_query(page)`) in the address bar and
   stores the session's view.
"""
from __future__ import annotations

import json
from urllib.parse import urlencode

import streamlit as st

from models import ViewState
from models.view import (QUERY_FIELDS, TOO_LONG_PARAM, SlugResolver, derived_sides, format_number,
                         page_fields)
from ui.element_places import in_place

_QUERY = "_opx_query"        # the session's view state, as query parameters (defaults left out)
_STATE = "_opx_state"        # the ViewState the widgets were last seeded from or written as
_PAGE = "_opx_page"          # the page running now
_LAST = "_opx_last"          # (page, canonical address) this session last wrote
_NOTICES = "_opx_notices"
_ARRIVED = "_opx_arrived"    # how this run entered the page: "link", "session" or None (a change made here)
_SAVED = "_opx_saved_view"   # (slug, title, query of the saved state) while it is shown
_REPLACE = "_opx_replace"    # (page, address) this run entered on: its history entry is replaced
_REPLACED = "_opx_replaced"  # (page, address) whose entry was replaced (its reruns may still send it)


def _current_query() -> dict[str, list[str]]:
    return {k: st.query_params.get_all(k) for k in st.query_params.keys()}


def _canonical(query: dict[str, list[str]]) -> tuple:
    return tuple(sorted((k, tuple(v)) for k, v in query.items()))


def seed_from_url(resolver: SlugResolver, page: str) -> list[str]:
    """Seed the widgets when the page was entered or its address changed from outside; return
    the address's notices."""
    ss = st.session_state
    ss[_PAGE] = page
    url = _current_query()
    bare = not any(k in QUERY_FIELDS or k == TOO_LONG_PARAM for k in url)
    ss[_ARRIVED] = None
    if _STATE in ss and (page, _canonical(url)) in (ss.get(_LAST), ss.get(_REPLACED)):
        return []
    sent = _sent_by_browser(_VIEW_WIDGETS) if _LAST not in ss else set()
    if sent:
        # A page on screen reconnected to this server after its own died (a failover) and
        # its first change came with every widget's value: those win over the address, which
        # says what the page was opened on, and the change is one like any other.
        state, notices = ViewState.from_query(url, resolver)
        _seed_widgets(state, keep=sent)
        ss[_NOTICES] = []
        return []
    ss[_ARRIVED] = "session" if bare else "link"
    ss[_REPLACED] = None
    ss[_REPLACE] = (page, _canonical(url))
    stored = ss.get(_QUERY)
    ss[_SAVED] = None
    if stored is not None and bare:
        state, notices = ViewState.from_query(stored, resolver)
    else:
        own = set(page_fields(page))
        kept = {k: v for k, v in (stored or {}).items() if k not in own}
        state, notices = ViewState.from_query({**kept, **url}, resolver)
        if state.view:
            state, saved_notices = _open_saved_view(state, resolver)
            notices += saved_notices
    _seed_widgets(state)
    ss[_NOTICES] = notices
    return notices


def arrived_by_link() -> bool:
    """Whether this run opened the page on an address that states its view (a link, a reload,
    Back or Forward), rather than on the session's view (the sidebar) or a change made here."""
    return st.session_state.get(_ARRIVED) == "link"


def leave_view(page: str) -> None:
    """On a page that does not show the view (Data): Streamlit forgets the other pages' widgets
    while it runs, so the next page entered seeds them again from the session's view (without
    this, a return to the page left for Data took its widgets' empty defaults as the view)."""
    ss = st.session_state
    ss[_PAGE] = page
    ss[_LAST] = None
    ss[_REPLACED] = None


def _seed_widgets(state: ViewState, keep: frozenset[str] | set[str] = frozenset()) -> None:
    """Write `state` into the widgets' keys, but for those in `keep` (values the browser sent)."""
    ss = st.session_state
    values = {name: list(v) if isinstance(v := getattr(state, name), tuple) else v
              for name in QUERY_FIELDS}
    values |= {"baseline": state.effective_baseline(), "target_slider": state.target}
    for name, value in values.items():
        if name not in keep:
            ss[name] = value
    ss[_STATE] = state


# the widgets whose keys are the view's: what a reconnected browser sends back
_VIEW_WIDGETS = frozenset(QUERY_FIELDS) | {"baseline", "target_slider"}


def _sent_by_browser(keys) -> set[str]:
    """Which of these widget keys the browser sent values for with this run. Only a page
    already on screen sends any on a session's first run: one whose server died and whose browser was
    handed to this one. Streamlit holds those values by widget id until the widget is drawn
    (its private state: there is no public way to read them), and a keyed widget's id ends with
    its key; an empty set if that ever changes, so the address decides, as on a fresh page."""
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx
        from streamlit.runtime.state.common import user_key_from_element_id
        ctx = get_script_run_ctx()
        ids = list(ctx.session_state._state._new_widget_state.keys()) if ctx else []
    except Exception:
        return set()
    return {key for key in map(user_key_from_element_id, ids) if key in keys}


def _open_saved_view(state: ViewState, resolver: SlugResolver) -> tuple[ViewState, list[str]]:
    from opx.store import saved_views
    from ui import data
    restored, notices, saved = saved_views.restore(data.database(), state, resolver)
    if saved is not None:
        st.session_state[_SAVED] = (saved.slug, saved.title, saved.query)
        st.session_state["_opx_saved_info"] = (
            f"Saved view “{saved.title}”, saved {saved.created_at:%Y-%m-%d %H:%M} on data "
            f"version {saved.data_version}.")
    return restored, notices


def saved_view_info() -> str | None:
    """A line describing the saved view on screen, while the view is unchanged."""
    return st.session_state.get("_opx_saved_info") if st.session_state.get(_SAVED) else None


def state_from_widgets() -> ViewState:
    """The seeded state with what this page's widgets now hold laid over it."""
    ss = st.session_state
    seeded: ViewState = ss.get(_STATE) or ViewState()
    values = seeded.model_dump()
    for name in QUERY_FIELDS:
        if name in ss:
            value = ss[name]
            values[name] = tuple(value) if isinstance(value, list) else value
    if (values["a"], values["b"]) == (seeded.a, seeded.b) and \
            (seeded.a, seeded.b) == derived_sides(seeded.hw, seeded.baseline):
        # A and B followed the shared hardware and were not changed here: they still follow it.
        del values["a"], values["b"]
    return ViewState(**values)


def without(state: ViewState, *names: str) -> ViewState:
    """`state` with these fields (ones no widget holds, such as Compare's runs) cleared, here and
    in the session, so the next run does not read them back."""
    for name in names:
        st.session_state[name] = None
    return state.model_copy(update=dict.fromkeys(names))


def write_url(state: ViewState) -> ViewState:
    """Put the page's address in the address bar if it is not there already and keep the state
    as the session's view. While a saved view is shown unchanged the address stays its short
    `?view=<slug>` link; returns the state with `view` set accordingly."""
    ss = st.session_state
    page = ss.get(_PAGE, "explorer")
    saved = ss.get(_SAVED)
    plain = state.model_copy(update={"view": None})
    if saved and urlencode(plain.to_query(), doseq=True) == saved[2]:
        state = plain.model_copy(update={"view": saved[0]})
        query = {"view": [saved[0]]}
    else:
        ss[_SAVED] = None
        state = plain
        query = state.to_query(page)
    _show_address(query)
    ss[_LAST] = (page, _canonical(query))
    ss[_QUERY] = plain.to_query()
    ss[_STATE] = state
    return state


def _show_address(query: dict[str, list[str]]) -> None:
    """Put `query` in the address bar.

    A page arrives on an address that has its history entry already: the sidebar's bare one, a
    link, or Back and Forward's. Setting the query would push a second entry (Streamlit pushes one
    unless it is handling a history navigation), so Back would stop on the same view, showing a
    link's notices again. On every arrival the entry is therefore replaced in place (the
    browser's own `history.replaceState`); Streamlit's front end does not see that and keeps
    sending the arrival's address with later reruns, which `_REPLACED` recognises until the next
    change goes through `st.query_params`, one history entry per change of view."""
    ss = st.session_state
    slot = in_place()         # one element in every run: the elements after it keep theirs
    arrival = ss.pop(_REPLACE, None)
    if arrival:
        ss[_REPLACED] = arrival
        search = json.dumps(urlencode(query, doseq=True))   # percent-encoded: no markup
        slot.html("<script>history.replaceState(history.state, '', "
                  f"location.pathname + ({search} ? '?' + {search} : ''));</script>",
                  unsafe_allow_javascript=True)
    elif _canonical(query) != _canonical(_current_query()):
        ss[_REPLACED] = None
        st.query_params.from_dict(query)


def sync_target_from_slider() -> None:
    st.session_state["target"] = float(st.session_state["target_slider"])


def sync_slider_from_target() -> None:
    st.session_state["target_slider"] = float(st.session_state["target"])


def keep_baseline_valid() -> None:
    """If the baseline hardware was removed from the selection, fall back to the default rule."""
    ss = st.session_state
    hw = tuple(ss.get("hw", ()))
    if ss.get("baseline") not in hw:
        ss["baseline"] = ViewState(hw=hw).effective_baseline()


# -- pages with their own state model (Simulate): the same pattern, keys prefixed -----------------

def seed_page_from_url(model_cls, resolver: SlugResolver, prefix: str, start=None) -> list[str]:
    """Seed `<prefix><field>` widget keys when the page was entered or its address changed from
    outside. Fields it shares with the view state (model, workload, statistic, target) follow the
    session's view, except those an address states, which become the session's (`_seeded_key`);
    `start(view)`, when given, gives the whole state a page opens on when its address says
    nothing and the session has not been on it yet."""
    ss = st.session_state
    ss[_PAGE] = prefix
    url = _current_query()
    bare = not any(k in model_cls.model_fields or k == TOO_LONG_PARAM for k in url)
    ss[_ARRIVED] = None
    if (prefix, _canonical(url)) in (ss.get(_LAST), ss.get(_REPLACED)):
        return []
    keys = {f"{prefix}{name}" for name in model_cls.model_fields}
    sent = _sent_by_browser(keys) if _LAST not in ss else set()
    if sent:                            # reconnected after a failover (seed_from_url)
        state, _ = model_cls.from_query(url, resolver)
        for name in model_cls.model_fields:
            if f"{prefix}{name}" not in sent:
                ss[f"{prefix}{name}"] = getattr(state, name)
        ss[_seeded_key(prefix)] = {n: getattr(state, n) for n in _common(model_cls)}
        return []
    ss[_ARRIVED] = "session" if bare else "link"
    ss[_REPLACED] = None
    ss[_REPLACE] = (prefix, _canonical(url))
    view = session_view()
    shared = {n: [format_number(v) if isinstance(v, float) else str(v)]
              for n in _common(model_cls) if (v := getattr(view, n)) is not None}
    # a shared value the page cannot take (a statistic it does not give) stays the page's own
    shared = {n: v for n, v in shared.items() if not model_cls.from_query({n: v})[1]}
    if bare:
        remembered = ss.get(_page_query_key(prefix), {})
        if start is not None and not remembered:
            state, notices = start(view), []
        else:
            state, notices = model_cls.from_query({**remembered, **shared}, resolver)
    else:
        state, notices = model_cls.from_query(url, resolver)
    for name in model_cls.model_fields:
        ss[f"{prefix}{name}"] = getattr(state, name)
    # A link decides the shared values it states (and can take): they become the session's as
    # if chosen here; the others, and everything on arrival by the sidebar, are only opened on.
    stated = set() if bare else {n for n in _common(model_cls)
                                 if n in url and not model_cls.from_query({n: url[n]}, resolver)[1]}
    ss[_seeded_key(prefix)] = {n: getattr(state, n) for n in _common(model_cls) if n not in stated}
    return notices


def session_view() -> ViewState:
    """The session's view state (what every page opens on)."""
    return ViewState.from_query(st.session_state.get(_QUERY) or {})[0]


def _seeded_key(prefix: str) -> str:
    """Where a page keeps the shared values it opened on without deciding them: such a value
    becomes the session's only when the user changes it there (opening Simulate at P50 leaves a
    session's mean alone); one its address states is left out, so it becomes the session's."""
    return f"{_LAST}_seeded_{prefix}"


def _page_query_key(prefix: str) -> str:
    """Where a page with its own state model keeps its last address for the session."""
    return f"{_LAST}_{prefix}"


def _common(model_cls) -> set[str]:
    return {n for n in model_cls.model_fields if n in ("model", "workload", "pct", "target")}


def page_state_from_widgets(model_cls, prefix: str):
    return model_cls(**{name: st.session_state.get(f"{prefix}{name}")
                        for name in model_cls.model_fields
                        if st.session_state.get(f"{prefix}{name}") is not None})


def write_page_url(state, prefix: str) -> None:
    ss = st.session_state
    query = state.to_query()
    _show_address(query)
    ss[_LAST] = (prefix, _canonical(query))
    ss[_page_query_key(prefix)] = query
    # The shared values chosen here, or stated by the address the page opened on, become the
    # session's.
    view = session_view()
    seeded = ss.get(_seeded_key(prefix), {})
    update = {n: getattr(state, n) for n in _common(type(state))
              if n not in seeded or getattr(state, n) != seeded[n]}
    if any(getattr(view, n) != v for n, v in update.items()):
        ss[_QUERY] = view.model_copy(update=update).to_query()
        ss.pop(_STATE, None)
