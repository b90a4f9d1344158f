"""What `app.py` needs to route: whether this request is for the embed view (`/embed`, shown
without navigation or sidebar), and whether the page chosen is one kept out of the navigation."""
from __future__ import annotations

from urllib.parse import urlsplit

import streamlit as st

from models.pages import PAGES

EMBED_PATHS = tuple(p.path for p in PAGES if not p.nav)


def is_embed_request() -> bool:
    """True when the browser asked for a page kept out of the navigation (`/embed`)."""
    try:
        path = urlsplit(st.context.url or "").path.rstrip("/")
    except Exception:          # no browser (AppTest): the navigation decides the page
        return False
    return any(path.endswith(p) for p in EMBED_PATHS)


def is_unlisted(page) -> bool:
    """The page `st.navigation` chose is one kept out of the navigation (`/embed`)."""
    return "/" + (getattr(page, "url_path", "") or "") in EMBED_PATHS
