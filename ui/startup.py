"""What the server process does once, the first time `app.py` imports this module: import
what every page uses, then keep those objects out of the garbage collector's walks.

With Streamlit's collection after each run turned off (`.streamlit/config.toml`), Python's own
collector still walks every tracked object now and then (a full collection once the objects that
survived younger collections grow by a quarter). After the imports the process holds about
157,000 tracked objects (the libraries' modules, classes and Altair's schema), alive until it
ends, and a full collection over them took 80-120 ms of whichever interaction it fell in (about
one in twelve). `gc.freeze` moves them to the permanent generation: a full collection then walks
only what the sessions made since, 7-22 ms.

The freeze runs once per process, before any page has built a view, so it holds no view, chart
or data (importing this module again after an edit freezes nothing); of the sessions, only what
Streamlit made for the first one before its script started (a few hundred objects), which
cyclic collection then never frees (docs/performance.md).
"""
from __future__ import annotations

import gc

import altair  # noqa: F401  (imported here so that its objects are frozen with the rest)
import pandas  # noqa: F401

import opx.publish.charts  # noqa: F401
import opx.answers.compare  # noqa: F401
import opx.answers.explorer  # noqa: F401
import ui.data  # noqa: F401
import ui.share  # noqa: F401
import ui.widgets  # noqa: F401

# Streamlit's file watcher (`make run`) removes the app's modules after an edit and the next run
# imports this one again: the mark lives on the `gc` module, which is never removed, so what
# sessions made by then is not frozen
if not hasattr(gc, "opx_frozen"):
    gc.collect()
    gc.freeze()
    gc.opx_frozen = gc.get_freeze_count()
FROZEN = gc.opx_frozen
