"""Load the built-in catalog (data/catalog/*.toml) into validated models."""
from __future__ import annotations

import functools
import tomllib
from pathlib import Path

from pydantic import ValidationError

from models import Catalog, Hardware, LLM, Workload
from opx.config import CATALOG_DIR
from opx.errors import OpxError

_FILES = (("hardware.toml", "hardware", Hardware), ("models.toml", "models", LLM),
          ("workloads.toml", "workloads", Workload))


def load_catalog(directory: Path = CATALOG_DIR) -> Catalog:
    parts: dict[str, dict] = {}
    for filename, table, model in _FILES:
        path = Path(directory) / filename
        try:
            raw = tomllib.loads(path.read_text())
        except FileNotFoundError:
            raise OpxError(path, "file", "missing") from None
        except tomllib.TOMLDecodeError as exc:
            raise OpxError(path, "toml", str(exc)) from None
        entries = raw.get(table)
        if not isinstance(entries, dict) or not entries:
            raise OpxError(path, table, f"expected a [{table}.<slug>] table per entry")
        parsed = {}
        for slug, body in entries.items():
            try:
                parsed[slug] = model.model_validate({"slug": slug, **body})
            except ValidationError as exc:
                err = exc.errors()[0]
                loc = ".".join(str(p) for p in err["loc"])
                raise OpxError(path, f"{table}.{slug}.{loc}", err["msg"]) from None
        parts[table] = parsed
    return Catalog(**parts)


@functools.lru_cache(maxsize=4)
def builtin_catalog() -> Catalog:
    return load_catalog(CATALOG_DIR)
