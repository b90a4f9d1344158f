"""opx: the operating-point explorer's behaviour, in packages that follow the data (docs/architecture.md):
ingest -> store -> answers -> publish, with curves and simulate beside them; never imports Streamlit.

Directly here: the base every package may import (config, errors, settings, catalog, links) and the
CLI (cli, __main__), which may import everything."""

# The release, named by the newest date in CHANGELOG.md; briefs and `--version` state it.
__version__ = "2026.12.1"
