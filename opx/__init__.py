"""opx: the operating-point explorer. Behaviour only; never imports Streamlit."""
