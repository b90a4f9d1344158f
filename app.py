"""opx entry point: page registry and the shared sidebar, nothing else."""
import streamlit as st

st.set_page_config(page_title="opx: operating-point explorer", page_icon=":material/monitoring:", layout="wide")

pages = [
    st.Page("app_pages/explorer.py", title="Explorer", icon=":material/monitoring:", default=True),
    st.Page("app_pages/compare.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"),
    st.Page("app_pages/planner.py", title="Planner", icon=":material/calculate:", url_path="planner"),
    st.Page("app_pages/latency.py", title="Latency", icon=":material/timer:", url_path="latency"),
    st.Page("app_pages/simulate.py", title="Simulate", icon=":material/science:", url_path="simulate"),
    st.Page("app_pages/data.py", title="Data", icon=":material/database:", url_path="data"),
]
page = st.navigation(pages)
st.sidebar.caption("opx · throughput per GPU against tokens/s per user, with the provenance of "
                   "every figure.")
page.run()
