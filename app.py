"""opx entry point: the page registry (`models.pages`) and the shared sidebar, nothing else."""
import streamlit as st

from models.pages import PAGES
from ui import startup  # noqa: F401  (once per process: imports, then the heap frozen)
from ui.reconnect import run_again_on_reconnect
from ui.routing import is_embed_request, is_unlisted

st.set_page_config(page_title="opx: operating-point explorer", page_icon=":material/monitoring:",
                   layout="wide")

embedded = is_embed_request()
# A page kept out of the navigation (`/embed`) is routed but not listed.
page = st.navigation([st.Page(p.script, title=p.title, icon=p.icon, default=p.path == "/",
                              url_path=p.path.strip("/") or None,
                              visibility="visible" if p.nav else "hidden") for p in PAGES],
                     position="hidden" if embedded else "sidebar")
if not (embedded or is_unlisted(page)):
    st.sidebar.caption("opx · throughput per GPU against tokens/s per user, with the provenance "
                       "of every figure.")
run_again_on_reconnect()        # a failover's page runs at once on its new server
page.run()
