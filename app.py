"""opx entry point: page registry and the shared sidebar, nothing else."""
import streamlit as st

from opx.settings import admin_token, read_only

st.set_page_config(page_title="opx: operating-point explorer", page_icon="📈", layout="wide")

pages = [
    st.Page("pages/explorer.py", title="Explorer", icon="📈", default=True),
    st.Page("pages/data.py", title="Data", icon="🗂️", url_path="data"),
]
page = st.navigation(pages)
if read_only():
    st.sidebar.info("Read-only: this opx can be viewed and exported, not changed.")
elif admin_token():
    st.sidebar.text_input("Admin token (needed for changes)", type="password", key="admin_token")
st.sidebar.caption("opx · throughput per GPU against tokens/s per user, with the provenance of "
                   "every figure.")
page.run()
