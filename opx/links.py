"""Links <-> views, in one place. A link is a page path plus query parameters; the state is parsed
by `ViewState.from_query` (validated, never evaluated) and built back with defaults left out."""
from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlencode, urlsplit

from models import ViewState
from models.view import SlugResolver
from opx.errors import OpxError

# Page paths (DESIGN.md): the Explorer is `/`.
PAGES = {"/": "explorer", "/compare": "compare", "/latency": "latency", "/planner": "planner",
         "/simulate": "simulate", "/data": "data"}


@dataclass
class Link:
    path: str
    state: ViewState
    notices: list[str] = field(default_factory=list)

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
    state, notices = ViewState.from_query(params, resolver)
    return Link(path, state, notices)


def build_link(path: str, state: ViewState, base: str = "") -> str:
    """The link of a view: `base` (scheme://host[:port]) + path + query, defaults left out."""
    if path not in PAGES:
        raise ValueError(f"unknown page {path!r}")
    query = urlencode(state.to_query(), doseq=True)
    return f"{base.rstrip('/')}{path}{'?' + query if query else ''}"
