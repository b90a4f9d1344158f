"""The address a page put in the browser's bar in an AppTest run. On arriving (a link, or the
sidebar's bare address) a page replaces its history entry with a script (`history.replaceState`),
which AppTest does not run; later changes go through `st.query_params`."""
from __future__ import annotations

import json
import re
from urllib.parse import parse_qs

_REPLACED = re.compile(r"history\.replaceState\(history\.state, '', location\.pathname \+ \((\"[^\"]*\")")


def shown_address(at) -> dict[str, list[str]]:
    """The query the page's last run put in the address bar, each value a list."""
    for element in at.get("html"):
        found = _REPLACED.search(element.proto.body)
        if found:
            return parse_qs(json.loads(found.group(1)), keep_blank_values=True)
    return {k: list(v) if isinstance(v, (list, tuple)) else [v]
            for k, v in ((k, at.query_params[k]) for k in at.query_params)}
