"""A place of its own for elements that come and go between runs of a page."""
import streamlit as st


def in_place():
    """A container for elements that show in one run of a page and not the next (a notice, a
    caveat, a second table): it is one element in every run, so the elements after it keep
    their places. Streamlit's front end draws an element anew when its place among its
    siblings moves: a chart is compiled again, a table rebuilt (docs/performance.md)."""
    return st.container()
