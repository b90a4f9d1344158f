"""Load the built-in catalog (data/catalog/*.toml) into validated models, and resolve spellings."""
from __future__ import annotations

import functools
import hashlib
import re
import tomllib
from collections.abc import Iterable
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


def slugify(spelling: str, last_path_part: bool = False) -> str:
    """A slug for a name the catalog does not know: `Qwen/Qwen3-32B` -> `qwen3-32b`."""
    text = spelling.strip().lower()
    if last_path_part:
        text = text.rstrip("/").rsplit("/", 1)[-1]
    text = re.sub(r"[^a-z0-9.]+", "-", text).strip("-.")
    return text or "unknown"


class Resolver:
    """Maps spellings onto slugs: the catalog first, then slugs already present in the data
    (imported hardware or models the catalog does not list)."""

    def __init__(self, catalog: Catalog, hardware: Iterable[str] = (), models: Iterable[str] = (),
                 workloads: Iterable[str] = ()):
        self.catalog = catalog
        self._extra = {"hardware": set(hardware), "models": set(models),
                       "workloads": set(workloads)}

    def _resolve(self, kind: str, found: str | None, spelling: str) -> str | None:
        if found:
            return found
        s = spelling.strip().lower()
        return s if s in self._extra[kind] else None

    def resolve_hardware(self, spelling: str) -> str | None:
        return self._resolve("hardware", self.catalog.resolve_hardware(spelling), spelling)

    def resolve_model(self, spelling: str) -> str | None:
        return self._resolve("models", self.catalog.resolve_model(spelling), spelling)

    def resolve_workload(self, spelling: str) -> str | None:
        return self._resolve("workloads", self.catalog.resolve_workload(spelling), spelling)


def fingerprint(catalog: Catalog) -> str:
    """A hash of the catalog's content: equal catalogs give equal keys (caches, stored fits)."""
    return hashlib.sha256(catalog.model_dump_json().encode()).hexdigest()
