"""opx: the operating-point explorer. Behaviour only; never imports Streamlit."""

# The release, named by the newest date in CHANGELOG.md; briefs and `--version` state it.
__version__ = "2026.12.1"
