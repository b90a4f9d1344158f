"""CSV cells a spreadsheet would evaluate: written as text by every CSV opx writes
(`spreadsheet_cell`) and read back exactly by the opx CSV importer (`unquote_cell`). Kept apart
from `opx.publish.export` so the importer does not load the chart renderer."""
from __future__ import annotations

import re
from typing import Any

# A spreadsheet evaluates a cell that starts with one of these (OWASP's list for CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_FORMULA_CELL = re.compile(r"'*[=+\-@\t\r]")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def spreadsheet_cell(value: Any) -> Any:
    """A text cell a spreadsheet would evaluate, prefixed with `'` (shown as text, the quote
    hidden); a cell already starting with quotes before such a character gets one more, so
    `unquote_cell` gives back exactly the text. Numbers, and text that is a plain number such as
    `-5`, are unchanged."""
    if isinstance(value, str) and _FORMULA_CELL.match(value) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def unquote_cell(text: str) -> str:
    """The inverse of `spreadsheet_cell`, for an importer reading a file opx wrote."""
    if text[:1] == "'" and _FORMULA_CELL.match(text, 1):
        return text[1:]
    return text
