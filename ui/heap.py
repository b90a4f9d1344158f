"""The server's heap after its first script run: what was loaded then (modules, the catalog,
Altair's schema) is kept out of every later garbage collection.

Streamlit collects all generations after every script run (`runner.postScriptGC`), so each
interaction walked every object the process holds, most of them the libraries' own and alive
until the process ends: 75-140 ms of each rerun here. After the first run has imported what
the pages use, one collection clears its garbage and `gc.freeze` moves what is left to the
permanent generation; the collection after each run then walks only what runs made since.
"""
from __future__ import annotations

import gc
import threading

_lock = threading.Lock()
_frozen = False


def settle() -> None:
    """Once per process, after a script run: collect, then freeze what survives."""
    global _frozen
    if _frozen:
        return
    with _lock:
        if not _frozen:
            gc.collect()
            gc.freeze()
            _frozen = True
