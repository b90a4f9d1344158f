"""The floor for a Streamlit page, served beside opx by bench/bench_browser.py: a title, a slider,
a typed number, a radio, a multiselect, two metrics, one Altair chart of 120 points and one table,
on two pages reached by the sidebar. Nothing is cached or precomputed: every rerun builds the
chart again, as any Streamlit page does.

    .venv/bin/python -m streamlit run bench/bare_page.py
"""
import altair as alt
import numpy as np
import pandas as pd
import streamlit as st


def explorer() -> None:
    st.title("Bare page")
    with st.sidebar:
        st.radio("Statistic", ("mean", "p50", "p90", "p99"), key="pct", horizontal=True)
        st.multiselect("Series", ["a", "b", "c", "d"], default=["a", "b"], key="series")
    left, right = st.columns([3, 1])
    left.select_slider("Target", [float(v) for v in range(10, 1000, 10)], value=380.0,
                       key="slider")
    right.number_input("Typed target", 1.0, 10_000.0, 387.0, step=1.0, key="typed")
    x = np.geomspace(10, 1000, 120 // max(1, len(st.session_state.series)))
    frame = pd.concat([pd.DataFrame({"x": x, "y": 1e6 / (x ** (0.8 + 0.1 * i)), "series": s})
                       for i, s in enumerate(st.session_state.series)], ignore_index=True)
    a, b = st.columns(2)
    a.metric("At the target", f"{float(np.interp(st.session_state.typed, x, frame.y[:len(x)])):,.0f}")
    b.metric("Peak", f"{frame.y.max():,.0f}")
    chart = alt.Chart(frame).mark_line(point=True).encode(
        x=alt.X("x", scale=alt.Scale(type="log")), y="y", color="series")
    rule = alt.Chart(pd.DataFrame({"x": [st.session_state.typed]})).mark_rule().encode(x="x")
    st.altair_chart(chart + rule, key="chart")
    st.dataframe(frame.head(20), hide_index=True)


def other() -> None:
    st.title("Other page")
    st.dataframe(pd.DataFrame({"a": range(10)}), hide_index=True)


st.navigation([st.Page(explorer, title="Explorer", default=True),
               st.Page(other, title="Other", url_path="other")]).run()
