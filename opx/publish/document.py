"""A link's file: what `opx export LINK --format F` writes and what `GET /api/v1/<page>.<F>`
answers, made by one function (`document`), so the two can never differ.

The CLI reads a link as a page does: a value it cannot honour is dropped with a notice. A program
asks strictly (`strict=True`): the first such value is a `BadParameter` naming the parameter."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

from models import Catalog
from models.view import notice_as_error
from opx import store
from opx.catalog import Resolver
from opx.errors import BadParameter, OpxError
from opx.links import Link, parse_link


@dataclass
class Document:
    data: bytes
    link: Link
    notices: list[str] = field(default_factory=list)


def resolver_for(db: Path, catalog: Catalog) -> Resolver:
    """Slugs as the pages resolve them: the catalog's, and any the database holds."""
    with store.reading(db) as con:
        known = {c: store.distinct_values(con, c) for c in ("hardware", "model", "workload")}
    return Resolver(catalog, known["hardware"], known["model"], known["workload"])


def read_link(text: str, db: Path, catalog: Catalog, *, strict: bool = False) -> Link:
    """A link's view as its page opens it (saved view restored, a removed run replaced)."""
    from opx.publish.link_view import open_link
    if not text.strip():
        raise OpxError("LINK", "", "is empty; give a share link or its path and query, e.g. "
                                   "'/compare?a=vr-nvl72&b=gb300-nvl72' ('/' is the seed view)")
    resolver = resolver_for(db, catalog)
    try:
        link = parse_link(text, resolver)
    except ValueError as exc:       # urlsplit: 'http://[::1' and the like
        raise OpxError(text, "", f"not a link opx can read ({exc}); give a share link or its "
                                 "path and query, e.g. '/compare?a=vr-nvl72&b=gb300-nvl72'"
                       ) from None
    if strict and link.notices:
        raise _first_bad(text, link.notices[0], resolver)
    if strict and link.state.view:
        from opx.store import saved_views
        saved, _ = saved_views.load(db, link.state.view)
        if saved is None:
            raise BadParameter("view", f"there is no saved view `{link.state.view[:40]}`",
                               missing=True)
    opened = open_link(link, db, resolver)
    if strict and opened.notices:
        raise BadParameter("ra" if "Run `" in opened.notices[0] else "view",
                           opened.notices[0], missing=True)
    return opened


def _first_bad(text: str, notice: str, resolver: Resolver) -> BadParameter:
    """The parameter behind a link's first notice: each parameter is read alone, and the first
    that gives a notice is named (a notice of two values together names the first of them)."""
    parts = urlsplit(text.strip())
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    for name in dict.fromkeys(k for k, _ in pairs):
        alone = urlencode([(k, v) for k, v in pairs if k == name])
        if parse_link(f"{parts.path or '/'}?{alone}", resolver).notices:
            return BadParameter(name, notice_as_error(notice))
    return BadParameter(pairs[0][0] if pairs else "", notice_as_error(notice))


def document(text: str, fmt: str, db: Path, catalog: Catalog, *, base_url: str | None = None,
             strict: bool = False) -> Document:
    """The file `fmt` of what the link `text` shows. Its links start with `base_url` (the
    address that was asked); by default with the link's own scheme://host[:port] when it is a
    full address, else `$OPX_BASE_URL`."""
    from opx.publish.render import render_link
    link = read_link(text, db, catalog, strict=strict)
    if base_url is None:
        parts = urlsplit(text.strip())      # read_link has parsed it: it splits
        base_url = f"{parts.scheme}://{parts.netloc}" if "://" in text else ""
    return Document(render_link(link, fmt, db, catalog, base_url=base_url), link,
                    list(link.notices))
