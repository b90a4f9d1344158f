"""The server's heap after a script run: what the pages loaded (modules, the catalog, Altair's
schema) is kept out of every later garbage collection.

Streamlit collects all generations after every script run (`runner.postScriptGC`), so each
interaction walked every object the process holds, most of them the libraries' own and alive
until the process ends: 75-140 ms of each rerun here. After a run that imported modules (the
first, and the first visit to a page with imports of its own), one collection clears the
garbage and `gc.freeze` moves what is left to the permanent generation; the collection after
each run then walks only what runs made since. What is frozen is never collected as a cycle
again, so it happens only when modules were added (a few times in a process's life).
"""
from __future__ import annotations

import gc
import sys
import threading

_lock = threading.Lock()
_modules_frozen = 0          # how many modules were loaded at the last freeze


def settle() -> None:
    """After a script run: if modules were imported since the last freeze, collect, then
    freeze what survives."""
    global _modules_frozen
    if len(sys.modules) <= _modules_frozen:
        return
    with _lock:
        loaded = len(sys.modules)
        if loaded > _modules_frozen:
            gc.collect()
            gc.freeze()
            _modules_frozen = loaded
