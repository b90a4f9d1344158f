"""Links <-> views, in one place. A link is a page path plus query parameters; the state is parsed
by `ViewState.from_query` (validated, never evaluated) and built back by `ViewState.to_query(page)`
(the shared view in full, the page's own fields when set)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlencode, urlsplit

from models import ViewState
from models.pages import PAGE_BY_PATH
from models.view import SlugResolver
from opx.errors import OpxError

# Where the dashboard is served, for links written outside a browser session (the CLI's exports,
# a page whose address is unknown): `OPX_BASE_URL`, else the address `make run` serves on.
BASE_URL_ENV = "OPX_BASE_URL"
DEFAULT_BASE_URL = "http://localhost:8501"

PAGES = PAGE_BY_PATH      # path -> page name, from the one page registry


SIMULATE_PATH = "/simulate"


@dataclass
class Link:
    path: str
    state: ViewState
    notices: list[str] = field(default_factory=list)
    # /simulate has a state of its own (models.simulate_view.SimulateState); `state` is then the
    # Explorer's question for the simulated system (`simulate_question`)
    sim: object | None = None

    @property
    def page(self) -> str:
        return PAGES[self.path]


def parse_link(link: str, resolver: SlugResolver | None = None) -> Link:
    """`http://host:8501/compare?a=...`, `/compare?a=...` or `?model=...` (the Explorer)."""
    parts = urlsplit(link.strip())
    path = "/" + parts.path.strip("/") if parts.path.strip("/") else "/"
    if path not in PAGES:
        raise OpxError("LINK", "path", f"`{path}` is not a page of opx; pages: {', '.join(PAGES)}")
    params = parse_qs(parts.query, keep_blank_values=True)
    if path == SIMULATE_PATH:
        return simulate_link(params, resolver)
    state, notices = ViewState.from_query(params, resolver)
    return Link(path, state, notices)


def simulate_link(params, resolver: SlugResolver | None = None) -> Link:
    from models.simulate_view import SimulateState
    sim, notices = SimulateState.from_query(params, resolver)
    return Link(SIMULATE_PATH, simulate_question(sim), notices, sim)


def simulate_question(sim) -> ViewState:
    """The Explorer's question for a simulated system: its hardware, model, workload, statistic
    and target."""
    return ViewState(model=sim.model, workload=sim.workload, hw=(sim.hw,), pct=sim.pct,
                     target=sim.target)


def link_text_of(link: Link, base: str = "") -> str:
    """The address of a link (a /simulate link's from its own state)."""
    if link.sim is not None:
        query = urlencode(link.sim.to_query(), doseq=True)
        return f"{base.rstrip('/')}{SIMULATE_PATH}{'?' + query if query else ''}"
    return build_link(link.path, link.state, base)


def build_link(path: str, state: ViewState, base: str = "") -> str:
    """The link of a view: `base` (scheme://host[:port]) + path + the page's address
    (`ViewState.to_query(page)`: the shared view in full, the page's own fields when set); a saved
    view's link is its short `?view=<slug>`."""
    if path not in PAGES:
        raise ValueError(f"unknown page {path!r}")
    query = urlencode({"view": [state.view]} if state.view else state.to_query(PAGES[path]),
                      doseq=True)
    return f"{base.rstrip('/')}{path}{'?' + query if query else ''}"


EMBED_PATH = "/embed"


def embed_link(path: str, state: ViewState, base: str = "") -> str:
    """The embed address of a view: `/embed?of=<page>` and the page's own address, which shows
    that page's chart alone (for an <iframe>); `embed=true` is Streamlit's own switch that drops
    its toolbar and padding."""
    page = PAGES[path]
    query = urlencode({"of": [page], **state.model_copy(update={"view": None}).to_query(page),
                       "embed": ["true"]}, doseq=True)
    return f"{base.rstrip('/')}{EMBED_PATH}?{query}"


def embedded_path(state: ViewState) -> str:
    """The path of the page an embed address shows (its `of`)."""
    return next(path for path, page in PAGES.items() if page == state.of)


# The embed page's height in a 900 px frame, measured in Chromium (chart, caption and link): a
# fixed part per page and a part per hardware (a legend row, a bar). tests/e2e checks that each
# page's snippet shows the whole embed.
EMBED_WIDTH = 900
EMBED_HEIGHT = {"explorer": (760, 24), "compare": (1280, 0), "planner": (460, 40)}


def embed_size(page: str, hardware: int) -> tuple[int, int]:
    """Width and height of the <iframe> that shows `page`'s embed with `hardware` systems."""
    fixed, each = EMBED_HEIGHT.get(page, EMBED_HEIGHT["explorer"])
    return EMBED_WIDTH, fixed + each * max(hardware, 1)


def iframe_snippet(src: str, title: str = "opx chart", size: tuple[int, int] = (960, 720)) -> str:
    """The HTML to paste into a wiki or a slide tool (attribute values escaped), sized to show
    the whole embed (`embed_size`)."""
    import html
    width, height = size
    return (f'<iframe src="{html.escape(src, quote=True)}" title="{html.escape(title, quote=True)}" '
            f'width="{width}" height="{height}" style="border:0" loading="lazy"></iframe>')


def base_url(given: str = "") -> str:
    """scheme://host[:port] for absolute links: `given` (e.g. the browser's address or the link
    being exported) if any, else `$OPX_BASE_URL`, else http://localhost:8501."""
    base = (given or os.environ.get(BASE_URL_ENV, "").strip() or DEFAULT_BASE_URL).rstrip("/")
    return base if "://" in base else f"http://{base}"


def absolute_link(link: str, base: str = "") -> str:
    """`link` as a full address: a path-and-query (`/compare?a=...`) gets `base_url(base)`."""
    if not link or "://" in link:
        return link
    return base_url(base) + ("" if link.startswith("/") else "/") + link
