"""Streamlit glue shared by the pages: URL <-> widget state and cached calls into opx."""
