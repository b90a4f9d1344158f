"""From files to runs: read safely, detect the format, parse, fill what the file lacks from the
CLI flags and the catalog, validate, and group points of one configuration into one run.

Each file is all or nothing: any problem refuses the whole file with
`<file>: <field or line>: <what is wrong>`, and a refused file writes nothing.
"""
from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import hashlib
import importlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from models import Catalog, Deployment, Point, Run
from models.catalog import workload_slug
from models.run import (MAX_META_ITEMS, MAX_META_VALUE_CHARS, MAX_NAME_CHARS, MAX_TOKENS,
                        TEXT_LIMITS, text_problem)
from opx.catalog import slugify
from opx.errors import OpxError, brief
from opx.ingest.base import PER_GPU_KEYS, FormatError, Record, too_deep

# Files above this size are refused before they are read: result files are kilobytes to a few
# megabytes; the largest real one we know (AIConfigurator's silicon_sample.csv) is under 2 MB.
MAX_FILE_BYTES = 64 * 1024 * 1024
# A CSV cell may be as long as a file, so that the text limits (models/run.py) refuse an overlong
# cell naming its field, where the csv module's own 128 KiB limit says only "field larger than
# field limit". Memory stays bounded by the file size.
csv.field_size_limit(MAX_FILE_BYTES)

# Detection order matters only where two formats could both claim a file. Sniffers are
# structural and no sample file of any tool is claimed by two of them
# (tests/unit/ingest/test_formats.py); vLLM, by far the most common file, is asked first, which
# spares such a file eight other sniffers. Its sniffer wants vLLM's own keys (`model_id` or
# `num_prompts`, `completed`, `*_ms` statistics), which no other tool writes together.
FORMAT_MODULES = ("vllm", "opx_csv", "inferencex", "aiconfigurator", "genai_perf", "aiperf",
                  "llmperf", "trtllm", "sglang")

# `--meta` keys (and vLLM `--metadata` keys) that set run facts rather than free metadata.
META_RUN_KEYS = {"hardware": "hardware", "gpus": "gpus_total", "model": "model",
                 "framework": "framework", "precision": "precision", "workload": "workload",
                 "tp": "tp", "ep": "ep", "prefill_gpus": "gpus_prefill",
                 "decode_gpus": "gpus_decode", "label": "label", "provenance": "provenance"}
WORKLOAD_TOLERANCE = 0.03    # measured mean ISL/OSL within 3% of a catalog workload's match it


_FORMATS: list[Any] = []


def formats() -> list[Any]:
    """The format modules that exist, in detection order (looked up once)."""
    if _FORMATS:
        return list(_FORMATS)
    found = []
    for name in FORMAT_MODULES:
        try:
            found.append(importlib.import_module(f"opx.ingest.{name}"))
        except ModuleNotFoundError as exc:
            if exc.name != f"opx.ingest.{name}":
                raise
    _FORMATS[:] = found
    return list(found)


def format_names() -> list[str]:
    return [m.NAME for m in formats()]


# What a user can say about the files they import, by name: `ingest`'s flags and the parameters
# of POST /api/v1/runs (each an `IngestOptions` field).
OPTION_HELP = {
    "format": "force a format instead of detecting it",
    "hardware": "hardware slug or spelling (overrides the file)",
    "model": "model slug or spelling (overrides the file)",
    "framework": "serving framework (overrides the file)",
    "precision": "weight precision, e.g. fp4, fp8 (overrides the file)",
    "workload": "workload slug (overrides the file)",
    "gpus": "all GPUs of the deployment",
    "meta": "run facts (hardware, gpus, model, framework, precision, workload, tp, ep, dp, "
            "prefill_gpus, decode_gpus, label, provenance) or free metadata as KEY=VALUE; "
            "repeatable",
}


def parse_meta(pairs) -> dict[str, str]:
    """`KEY=VALUE` pairs as a dict; a pair that is not one is a ValueError naming it."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(pair)
        out[key.strip()] = value.strip()
    return out


@dataclass(frozen=True)
class IngestOptions:
    """What the user says about the files; these override what a file states."""
    format: str | None = None
    hardware: str | None = None
    model: str | None = None
    framework: str | None = None
    precision: str | None = None
    workload: str | None = None
    gpus: int | None = None
    meta: dict[str, str] = field(default_factory=dict)

    def run_overrides(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        extra: dict[str, str] = {}
        for key, value in self.meta.items():
            if key in META_RUN_KEYS:
                out[META_RUN_KEYS[key]] = value
            else:
                extra[key] = value
        for key in ("hardware", "model", "framework", "precision", "workload"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.gpus is not None:
            out["gpus_total"] = self.gpus
        if extra:
            out["meta"] = extra
        return out


@dataclass
class FileResult:
    path: Path
    format: str = ""
    runs: list[Run] = field(default_factory=list)
    error: str | None = None
    notices: list[str] = field(default_factory=list)
    runs_added: int = 0
    points_added: int = 0
    # The store's rows for `runs` (opx.store.RunRows), filled by the importer; a file parsed in a
    # worker process comes back with these and `runs` empty.
    rows: list[Any] | None = None
    # Why a file was not stored although it may be valid: the database error that stopped the
    # import at or before this file's batch.
    store_error: OpxError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


# -- files ---------------------------------------------------------------------------------------

def collect_files(paths: Iterable[str | Path]) -> tuple[list[Path], list[FileResult]]:
    """Files named, and every file under folders named (recursively, hidden ones skipped); and a
    refusal for each path that does not exist."""
    names, missing = [], []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            names.extend(sorted(_walk(str(p)), key=lambda f: f.split(os.sep)))
        elif p.is_file():
            names.append(str(p))
        else:
            missing.append(FileResult(p, error=f"{p}: path: no such file or folder"))
    return [Path(name) for name in dict.fromkeys(names)], missing


def _walk(folder: str) -> Iterator[str]:
    """Regular files under `folder`, hidden ones and their folders skipped, symlinked folders not
    followed. scandir's entries know their type, so no file is stat-ed twice."""
    stack = [folder]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            elif entry.is_file():
                yield entry.path


def read_text(path: Path, data: bytes | None = None) -> tuple[str, str]:
    """The file's text and its sha256; refuses empty, oversized, binary and non-UTF-8 files."""
    if data is None:
        try:
            data = _read_bytes(path)
        except OSError as exc:      # gone since the folder was listed, no permission, a folder
            raise OpxError(path, "file", f"cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_FILE_BYTES:
        raise OpxError(path, "size", f"{len(data):,} bytes is over the {MAX_FILE_BYTES:,}-byte limit")
    if not data or data.isspace():
        raise OpxError(path, "file", "is empty")
    if data.find(b"\x00", 0, 65536) >= 0:
        raise OpxError(path, "file", "is binary data, not a text result file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise OpxError(path, f"line {line}", "is not UTF-8 text") from None
    return text, hashlib.sha256(data).hexdigest()


def _read_bytes(path: Path) -> bytes:
    with open(path, "rb", buffering=0) as f:
        size = os.fstat(f.fileno()).st_size
        if size > MAX_FILE_BYTES:       # refused before it is read
            raise OpxError(path, "size", f"{size:,} bytes is over the {MAX_FILE_BYTES:,}-byte limit")
        return f.readall()


def detect(path: Path, text: str, forced: str | None = None):
    modules = formats()
    if forced:
        for m in modules:
            if m.NAME == forced:
                return m
        raise OpxError(path, "--format", f"unknown format `{forced}`; known formats: "
                                         f"{', '.join(m.NAME for m in modules)}")
    for m in modules:
        try:
            if m.sniff(path, text):
                return m
        except Exception:       # a sniffer must never stop detection
            continue
    broken = _broken_json(text)
    if broken is not None:
        # Sniffers read a file's structure, which a cut-short JSON file has not got: say what is
        # wrong with it rather than "not a known format".
        raise OpxError(path, *broken)
    raise OpxError(path, "format", "not a result file of a known format; known formats: "
                                   f"{', '.join(m.NAME for m in modules)} (use --format to force one)")


def _broken_json(text: str) -> tuple[str, str] | None:
    """For a text that starts as JSON (`{` or `[`) but does not decode, as one document or as
    several one after another (JSONL): where the first one breaks (`line L column C`) and why.
    None for valid JSON and for text that is not JSON at all (a CSV)."""
    start = len(text) - len(text.lstrip())
    if text[start:start + 1] not in ("{", "["):
        return None
    decoder = json.JSONDecoder()
    i = start
    try:
        while i < len(text):
            _, i = decoder.raw_decode(text, i)
            while i < len(text) and text[i].isspace():
                i += 1
    except json.JSONDecodeError as exc:
        end = len(text.rstrip())        # where the text ends, as line and column
        line, column = text.count("\n", 0, end) + 1, end - text.rfind("\n", 0, end)
        at_end = f"line {line} column {column}"
        # A string left open runs to the end of the text (strict JSON allows no newline in it).
        if exc.msg.startswith("Unterminated string"):
            return at_end, ("truncated JSON: the file ends inside a string that opens at "
                            f"line {exc.lineno} column {exc.colno}")
        if exc.pos >= end:
            return at_end, f"truncated JSON: the file ends before the JSON is complete ({exc.msg})"
        return f"line {exc.lineno} column {exc.colno}", f"invalid JSON ({exc.msg})"
    except RecursionError:
        return too_deep().where, too_deep().problem
    except ValueError as exc:           # e.g. an integer over Python's digit limit
        return "json", f"invalid JSON ({exc})"
    return None


# -- records -> runs -------------------------------------------------------------------------------

def parse_file(path: Path, options: IngestOptions, catalog: Catalog,
               data: bytes | None = None, display_name: str | None = None) -> FileResult:
    """Everything short of writing: the runs a file would add, or its error. `data`: the file's
    bytes when they come from elsewhere (an upload), named `display_name` in every message."""
    return parse_files([(path, data, display_name)], options, catalog)[0]


FileToParse = tuple[Path, "bytes | None", "str | None"]     # path, its bytes if given, name shown


def parse_files(files: Iterable[Path | FileToParse], options: IngestOptions,
                catalog: Catalog) -> list[FileResult]:
    """`parse_file` for many files, stage by stage: every file is read, then each is detected and
    parsed, then each one's runs are built. Each file keeps its own checks and messages (a file
    refused at one stage skips the later ones). Going stage by stage keeps each stage's code warm:
    a folder of small files parses about a quarter faster than file by file."""
    results, read = [], []
    for path, data, name in (f if isinstance(f, tuple) else (f, None, None) for f in files):
        result = FileResult(Path(name) if name else path)
        results.append(result)
        try:
            read.append((result, name or str(path), *read_text(path, data)))
        except OpxError as exc:
            result.error = str(exc)
    parsed = []
    for result, shown, text, sha256 in read:
        try:
            parsed.append((result, shown, _records(result, shown, text, options), sha256))
        except OpxError as exc:
            result.error = str(exc)
    for result, shown, records, sha256 in parsed:
        try:
            result.runs = build_runs(shown, records, options, catalog,
                                     f"{_text_of(result.path.name)} (sha256 {sha256})",
                                     result.notices)
            result.notices = list(dict.fromkeys(result.notices))
        except OpxError as exc:
            result.error = str(exc)
    return results


def _text_of(name: str) -> str:
    """A file name as storable text: a name that is not UTF-8 (its bytes held as lone surrogates)
    keeps them as `\\udcff` escapes."""
    return name.encode("utf-8", "backslashreplace").decode("utf-8")


def _records(result: FileResult, shown: str, text: str, options: IngestOptions) -> Sequence[Record]:
    module = detect(result.path, text, options.format)
    result.format = module.NAME
    try:
        records = module.parse(result.path, text)
    except FormatError as exc:
        raise OpxError(shown, exc.where, exc.problem) from None
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError,
            OverflowError, csv.Error) as exc:
        # A file of the right kind but the wrong shape: refuse it, never crash.
        raise OpxError(shown, "structure", f"unexpected content for {module.NAME} ({exc})") from None
    if not records:
        raise OpxError(shown, "file", f"holds no results ({module.NAME})")
    return records


def build_runs(shown: str, records: Sequence[Record], options: IngestOptions, catalog: Catalog,
               source: str, notices: list[str]) -> list[Run]:
    """The runs of one file's records: records of one configuration (the same run facts) form one
    run, split only where their lengths name different workloads (see `_length_groups`)."""
    groups: dict[str, list[Record]] = {}
    if len(records) == 1:
        groups[""] = list(records)
    else:
        for rec in records:
            groups.setdefault(json.dumps(rec.run, sort_keys=True, default=str), []).append(rec)
    overrides = options.run_overrides()
    runs = []
    for recs in groups.values():
        facts = dict(recs[0].run)
        meta = {str(k): str(v) for k, v in (facts.pop("meta", None) or {}).items()}
        meta.update(overrides.get("meta", {}))
        facts.update({k: v for k, v in overrides.items() if k != "meta"})
        _check_text(shown, recs[0].where, facts, meta)
        for lengths in _length_groups(shown, facts, recs, catalog):
            where = lengths.records[0].where or "file"
            before = len(notices)
            run = _run(shown, where, {**facts, **lengths.facts}, meta, lengths.records, catalog,
                       source, notices)
            if lengths.noted:
                # One note on the workload, which says all the other would.
                new = _new_workload_notice(run.isl or 0, run.osl or 0, run.workload)
                notices[before:] = [n for n in notices[before:] if n != new]
                run = _say_lengths(run, facts, lengths, options, catalog, notices)
            runs.append(run)
    return runs


def _check_text(shown: str, where: str, facts: dict, meta: dict[str, str]) -> None:
    """The run's text facts and metadata within their limits (models/run.py), checked before a
    spelling is resolved or quoted in a notice."""
    at = f"{where}: " if where else ""
    for key, limit in TEXT_LIMITS.items():
        value = facts.get(key)
        if value is not None and (problem := text_problem(str(value), limit)):
            raise OpxError(shown, at + key, problem)
    if len(meta) > MAX_META_ITEMS:
        raise OpxError(shown, at + "meta", f"has {len(meta):,} entries, over the limit of "
                                           f"{MAX_META_ITEMS:,}")
    for key, value in meta.items():
        if problem := text_problem(key, MAX_NAME_CHARS):
            raise OpxError(shown, at + "meta", f"a key {problem}")
        if problem := text_problem(value, MAX_META_VALUE_CHARS):
            raise OpxError(shown, f"{at}meta.{key}", problem)


# -- workload and ISL/OSL of a run -------------------------------------------------------------------
#
# A run's ISL/OSL name its workload, and they are part of its identity, so they must be the same
# for every point of a sweep: the lengths the benchmark was configured with (SGLang's
# random_input_len, LLMPerf's mean_input_tokens, ...) where the file states them, else the lengths
# of the catalog workload the measured means fall within 3% of, else the mean of the measured
# means. Measured means vary from point to point (random lengths, requests that stop early); each
# point whose means differ from its run's ISL/OSL keeps them in its note, and the import says so.

_SIDES = ("ISL", "OSL")


@dataclass
class _Lengths:
    """Records that share a run's ISL/OSL, and how those were chosen."""
    records: list[Record]
    facts: dict[str, Any]                 # isl / osl for the run facts ({} keeps the file's)
    basis: tuple[str, str] = ("", "")     # per side: configured / catalog / measured / ""
    noted: bool = False                   # a point's measured means differ from the run's


def _length_groups(shown: str, facts: dict, recs: list[Record], catalog: Catalog) -> list[_Lengths]:
    if all(r.measured is None for r in recs):
        return [_Lengths(recs, {})]                     # the file's own lengths, as they are
    configured = (_int_or_round(shown, facts, "isl"), _int_or_round(shown, facts, "osl"))
    stated = facts.get("workload")
    if stated not in (None, ""):
        # The workload is named (flag, --meta or the file): every point joins it, with the
        # configured lengths, else the catalog workload's, else none.
        slug = catalog.resolve_workload(str(stated))
        known = catalog.workloads.get(slug) if slug else None
        nominal = tuple(c if c else (getattr(known, side.lower()) if known else None)
                        for c, side in zip(configured, _SIDES))
        basis = tuple("configured" if c else ("catalog" if known else "")
                      for c in configured)
        return [_measured_notes(recs, nominal, basis)]
    if configured[0] and configured[1]:
        return [_measured_notes(recs, configured, ("configured", "configured"))]
    # Lengths from the measured means (a side the file configures stays as configured): points
    # within 3% of a catalog workload join it; the others join the first group of points within
    # 3% of each other, which takes their mean.
    groups: dict[Any, list[tuple[Record, tuple[float | None, float | None]]]] = {}
    anchors: list[tuple[float, float]] = []
    for rec in recs:
        measured = rec.measured or (None, None)
        lengths = tuple(c if c else _positive(m) for c, m in zip(configured, measured))
        if lengths[0] is None or lengths[1] is None:
            key: Any = ("partial", lengths)
        elif (slug := _catalog_workload(lengths[0], lengths[1], catalog)) is not None:
            key = ("catalog", slug)
        else:
            index = next((i for i, anchor in enumerate(anchors) if _near(anchor, lengths)), None)
            if index is None:
                index = len(anchors)
                anchors.append(lengths)
            key = ("measured", index)
        groups.setdefault(key, []).append((rec, lengths))
    out = []
    for key, members in groups.items():
        records = [rec for rec, _ in members]
        if key[0] == "catalog":
            known = catalog.workloads[key[1]]
            nominal = (configured[0] or known.isl, configured[1] or known.osl)
            basis = tuple("configured" if c else "catalog" for c in configured)
        else:
            nominal = tuple(c if c else _mean_or_none([m[i] for _, m in members])
                            for i, c in enumerate(configured))
            basis = tuple("configured" if c else ("measured" if n else "")
                          for c, n in zip(configured, nominal))
        out.append(_measured_notes(records, nominal, basis))
    return out


def _measured_notes(recs: list[Record], nominal: tuple, basis: tuple) -> _Lengths:
    """The group with the run's ISL/OSL set, and a note on each point whose measured means
    differ from them."""
    out, noted = [], False
    for rec in recs:
        measured = tuple(_positive(m) for m in (rec.measured or (None, None)))
        if any(m is not None and (n is None or round(m) != n)
               for m, n in zip(measured, nominal)):
            said = ", ".join(f"{side} {m:.0f}" for side, m in zip(_SIDES, measured)
                             if m is not None)
            note = "; ".join(n for n in (rec.point.get("note"), f"measured mean {said}") if n)
            rec = dataclasses.replace(rec, point={**rec.point, "note": note})
            noted = True
        out.append(rec)
    return _Lengths(out, {"isl": nominal[0], "osl": nominal[1]}, basis, noted)


def _say_lengths(run: Run, facts: dict, lengths: _Lengths, options: IngestOptions,
                 catalog: Catalog, notices: list[str]) -> Run:
    """The import's note on how the run's workload and ISL/OSL were chosen, with the range of
    the measured means in this file; the run's own note says the same without the range."""
    first = lengths.records[0]
    basis = _basis_text(lengths.basis, first.configured_as, len(lengths.records))
    if facts.get("workload") not in (None, ""):
        given = "as given (--workload)" if options.workload else "as the file or --meta states"
        how = f"workload `{run.workload}` {given}; "
        how += (f"ISL/OSL {run.isl}/{run.osl} ({basis})" if run.isl and run.osl
                else "ISL/OSL not set (the workload is not in the catalog and the file "
                     "configures no lengths)")
    else:
        known = "" if run.workload in catalog.workloads else " (not in the catalog)"
        how = f"workload `{run.workload}`{known} from ISL/OSL {run.isl}/{run.osl} ({basis})"
    spans = []
    for i, side in enumerate(_SIDES):
        values = [round(v) for r in lengths.records
                  if r.measured and (v := _positive(r.measured[i])) is not None]
        if values:
            low, high = min(values), max(values)
            spans.append(f"{side} {low}" + (f"-{high}" if high != low else ""))
    vary = f" vary with {first.varies_with}" if first.varies_with else ""
    notices.append(f"{how}; measured means {', '.join(spans)}{vary}")
    note = (f"{how}; each point's note gives its measured mean lengths"
            + (f" (they vary with {first.varies_with})" if first.varies_with else ""))
    return run.model_copy(update={"notes": "; ".join(n for n in (run.notes, note) if n)})


def _basis_text(basis: tuple[str, str], configured_as: str, points: int) -> str:
    measured = "as measured" if points == 1 else f"the mean over {points} points"
    if basis == ("configured", "configured"):
        return configured_as or "the configured lengths"
    if basis == ("catalog", "catalog"):
        return "the catalog workload's, within 3% of the measured means"
    if basis == ("measured", "measured"):
        return (f"the mean of the measured means of {points} points within 3% of each other"
                if points > 1 else "the measured means")
    words = {"configured": "as configured", "catalog": "the catalog workload's",
             "measured": measured}
    return ", ".join(f"{side} {words[b]}" for side, b in zip(_SIDES, basis) if b)


def _catalog_workload(isl: float, osl: float, catalog: Catalog) -> str | None:
    """The catalog workload with exactly these ISL and OSL, else the nearest whose ISL and OSL
    are both within 3% of these, if any (1,000/1,000 is its own workload, not 1k1k's)."""
    near = [(abs(isl - w.isl) / w.isl + abs(osl - w.osl) / w.osl, slug)
            for slug, w in catalog.workloads.items()
            if abs(isl - w.isl) <= WORKLOAD_TOLERANCE * w.isl
            and abs(osl - w.osl) <= WORKLOAD_TOLERANCE * w.osl]
    return min(near)[1] if near else None


def _near(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return all(abs(x - y) <= WORKLOAD_TOLERANCE * x for x, y in zip(a, b))


def _positive(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def _mean_or_none(values: list[float | None]) -> int | None:
    known = [v for v in values if v is not None]
    return int(round(sum(known) / len(known))) if known else None


_FACT_FLAGS = {"hardware": ("which hardware ran it", "--hardware H", "hardware=H"),
               "model": ("which model it served", "--model M", "model=M"),
               "gpus": ("how many GPUs served it (there is no per-GPU figure without it)",
                        "--gpus N", "gpus=N"),
               "workload": ("its workload or ISL/OSL", "--workload W", "workload=W")}


def _all_missing(shown: str, facts: dict, meta: dict) -> None:
    """When a file lacks several facts, say all of them at once rather than one per attempt."""
    def given(key: str) -> bool:
        return facts.get(key) not in (None, "")
    missing = [k for k in ("hardware", "model") if not given(k)]
    if not (given("gpus_total") or (given("gpus_prefill") and given("gpus_decode"))
            or (given("tp") and "dp" in meta)):
        missing.append("gpus")
    if not (given("workload") or (given("isl") and given("osl"))):
        missing.append("workload")
    if len(missing) < 2:
        return          # one missing fact gets its own message below
    what = "; ".join(_FACT_FLAGS[k][0] for k in missing)
    flags = " ".join(_FACT_FLAGS[k][1] for k in missing)
    meta_keys = " ".join(f"--meta {_FACT_FLAGS[k][2]}" for k in missing)
    raise OpxError(shown, ", ".join(missing),
                   f"the file does not say {what}; pass {flags} (or {meta_keys})")


def _need(shown: str, facts: dict, key: str, flag: str, meta_key: str) -> Any:
    value = facts.get(key)
    if value in (None, ""):
        raise OpxError(shown, key, f"the file does not say which {key} it is for; "
                                   f"pass {flag} or --meta {meta_key}=...")
    return value


def _slug(shown: str, kind: str, spelling: Any, resolve: Callable[[str], str | None],
          notices: list[str], path_like: bool = False) -> str:
    spelling = str(spelling)
    slug = resolve(spelling)
    if slug:
        return slug
    slug = slugify(spelling, last_path_part=path_like)
    notices.append(f"{kind} `{spelling}` is not in the catalog; stored as `{slug}`")
    return slug


def _as_number(value: Any) -> float | int | None:
    """A fact as a number: an int as it is (float() fails beyond 10^308), anything else through
    float(); None when it is not a number."""
    if value.__class__ is int:
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _int_fact(shown: str, facts: dict, key: str) -> int | None:
    """A positive whole number; its range is the model's (models/run.py)."""
    value = facts.get(key)
    if value in (None, ""):
        return None
    number = _as_number(value)
    if number is None:
        raise OpxError(shown, key, f"expected a whole number, got {brief(value)}")
    if number == float("inf"):          # "1e400", 400 digits
        raise OpxError(shown, key, f"{brief(value)} is too large")
    if (number.__class__ is float and not number.is_integer()) or number <= 0:
        raise OpxError(shown, key, f"expected a positive whole number, got {brief(value)}")
    return int(number)


def _bool_fact(shown: str, facts: dict, key: str) -> bool | None:
    value = facts.get(key)
    if value in (None, ""):
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off", "none"):
        return False
    raise OpxError(shown, key, f"expected true or false, got {brief(value)}")


def _workload(shown: str, stated: Any, isl: int | None, osl: int | None, catalog: Catalog,
              notices: list[str]) -> str:
    if stated:
        return _slug(shown, "workload", stated, catalog.resolve_workload, notices)
    if isl and osl:
        match = _catalog_workload(isl, osl, catalog)
        if match is not None:
            return match
        slug = workload_slug(int(round(isl)), int(round(osl)))
        notices.append(_new_workload_notice(isl, osl, slug))
        return slug
    raise OpxError(shown, "workload", "the file states neither a workload nor ISL/OSL; "
                                      "pass --workload or --meta workload=...")


def _new_workload_notice(isl: int, osl: int, slug: str) -> str:
    return f"workload: ISL {isl:g} / OSL {osl:g} matches no catalog workload; stored as `{slug}`"


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)


def _date(shown: str, value: Any) -> dt.date | None:
    if value in (None, ""):
        return None
    if isinstance(value, dt.date):
        return value
    text = str(value).strip()
    if _ISO_DATE.match(text):               # the usual spelling, without strptime's cost
        try:
            return dt.date(int(text[:4]), int(text[5:7]), int(text[8:10]))
        except ValueError:
            pass
    for candidate in (text[:10], text[:8]):
        for fmt in ("%Y-%m-%d", "%Y%m%d"):
            try:
                return dt.datetime.strptime(candidate, fmt).date()
            except ValueError:
                continue
    raise OpxError(shown, "date", f"{brief(value)} is not a date (YYYY-MM-DD)")


def _run(shown: str, where: str, facts: dict, meta: dict, recs: Sequence[Record],
         catalog: Catalog, source: str, notices: list[str]) -> Run:
    # A file that carries the origin of its figures keeps it, with the file it came through.
    run_source = str(facts.get("source") or source)
    point_source = f"{facts['source']} (via {source})" if facts.get("source") else source
    settings, gpus = _run_settings(shown, facts, meta, catalog, notices)
    points = tuple(_point(shown, rec, gpus, point_source) for rec in recs)
    # The date is read after the points: a file with a bad point and a bad date reports the point.
    settings["date"] = _date(shown, facts.get("date"))
    try:
        return Run(**settings, source=run_source, points=points)
    except ValidationError as exc:
        raise OpxError(shown, _loc(exc, where), _first_msg(exc)) from None


def _run_settings(shown: str, facts: dict, meta: dict, catalog: Catalog, notices: list[str]
                  ) -> tuple[dict[str, Any], int]:
    """Every field of the run but its points, source and date, and its GPU count."""
    _all_missing(shown, facts, meta)
    hardware = _slug(shown, "hardware", _need(shown, facts, "hardware", "--hardware", "hardware"),
                     catalog.resolve_hardware, notices)
    model = _slug(shown, "model", _need(shown, facts, "model", "--model", "model"),
                  catalog.resolve_model, notices, path_like=True)
    isl = _int_or_round(shown, facts, "isl")
    osl = _int_or_round(shown, facts, "osl")
    workload = _workload(shown, facts.get("workload"), isl, osl, catalog, notices)
    prefill = _int_fact(shown, facts, "gpus_prefill")
    decode = _int_fact(shown, facts, "gpus_decode")
    gpus = _int_fact(shown, facts, "gpus_total")
    if gpus is None and prefill and decode:
        gpus = prefill + decode
    if gpus is None and "dp" in meta and _int_fact(shown, facts, "tp"):
        gpus = _int_fact(shown, facts, "tp") * _int_fact(shown, {"dp": meta["dp"]}, "dp")
        notices.append(f"GPU count {gpus} taken as TP x DP from the metadata")
    if gpus is None:
        raise OpxError(shown, "gpus", "the file does not say how many GPUs served it, so there is "
                                      "no per-GPU figure; pass --gpus N or --meta gpus=N")
    try:
        deployment = Deployment(
            tp=_int_fact(shown, facts, "tp"), ep=_int_fact(shown, facts, "ep"),
            dp_attention=_bool_fact(shown, facts, "dp_attention"),
            disaggregated=bool(_bool_fact(shown, facts, "disaggregated") or (prefill and decode)),
            gpus_prefill=prefill, gpus_decode=decode, gpus_total=gpus,
            mtp=_bool_fact(shown, facts, "mtp"))
    except ValidationError as exc:
        raise OpxError(shown, _loc(exc, "deployment"), _first_msg(exc)) from None
    return dict(hardware=hardware, model=model, workload=workload,
                framework=str(facts.get("framework") or ""),
                framework_version=str(facts.get("framework_version") or ""),
                precision=str(facts.get("precision") or ""), isl=isl, osl=osl,
                prefix_hit_rate=facts.get("prefix_hit_rate"), deployment=deployment,
                provenance=facts.get("provenance") or "measured",
                source_url=str(facts.get("source_url") or ""),
                label=str(facts.get("label") or ""),
                notes=str(facts.get("notes") or ""), meta=meta), gpus


def _point(shown: str, rec: Record, gpus: int, source: str) -> Point:
    values = dict(rec.point)
    for key in (PER_GPU_KEYS if not values.keys().isdisjoint(PER_GPU_KEYS) else ()):
        per_gpu = values.pop(key, None)
        if per_gpu is not None:
            total_key = key.replace("_per_gpu", "_tok_s")
            if values.get(total_key) is not None:
                raise OpxError(shown, f"{rec.where or 'point'}: {key}",
                               f"given together with {total_key}; give one of them")
            values[total_key] = per_gpu * gpus
    try:
        return Point(**values, source=source)
    except ValidationError as exc:
        raise OpxError(shown, _loc(exc, rec.where or "point"), _first_msg(exc)) from None


def _int_or_round(shown: str, facts: dict, key: str) -> int | None:
    """A length as a whole number of tokens, None when it is not a positive number. Its range is
    checked here, before a workload is named after it."""
    value = facts.get(key)
    v = None if value in (None, "") else _as_number(value)
    if v is None:
        return None
    if v > MAX_TOKENS:
        raise OpxError(shown, key, f"is {brief(value)}, over the limit of {MAX_TOKENS:,} tokens")
    return int(round(v)) if v > 0 else None


def _loc(exc: ValidationError, prefix: str) -> str:
    loc = ".".join(str(p) for p in exc.errors()[0]["loc"])
    return f"{prefix}: {loc}" if loc else prefix


def _first_msg(exc: ValidationError) -> str:
    err = exc.errors()[0]
    value = err.get("input")
    got = f" (got {brief(value)})" if not isinstance(value, dict) and value is not None else ""
    return f"{err['msg'].removeprefix('Value error, ')}{got}"
