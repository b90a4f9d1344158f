"""Mutated result files are either imported or refused with an error, never a crash, and a refused
file leaves the database as it was."""
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opx import store
from opx.store.importer import import_uploads
from opx.ingest.core import IngestOptions
from tests.conftest import ROOT

SHARED = ROOT.parent / "shared" / "fixtures"
SMALL = 200_000


def _seeds() -> list[tuple[str, bytes]]:
    files = [p for p in (ROOT / "tests" / "fixtures").rglob("*") if p.is_file()]
    if SHARED.exists():
        files += [p for p in SHARED.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".csv")]
    return [(p.name, p.read_bytes()) for p in sorted(files) if p.stat().st_size < SMALL]


SEEDS = _seeds()
# Give every file what it may lack, so that mutations, not missing facts, decide the outcome.
OPTIONS = IngestOptions(hardware="h200", model="deepseek-r1", workload="1k1k", gpus=8)


@st.composite
def mutated(draw):
    name, data = draw(st.sampled_from(SEEDS))
    text = bytearray(data)
    kind = draw(st.sampled_from(["truncate", "delete", "duplicate", "number", "bytes", "swap"]))
    n = len(text)
    i = draw(st.integers(0, max(n - 1, 0)))
    j = draw(st.integers(i, min(n, i + 200)))
    if kind == "truncate":
        text = text[:i]
    elif kind == "delete":
        del text[i:j]
    elif kind == "duplicate":
        text[i:i] = text[i:j]
    elif kind == "bytes":
        text[i:i] = draw(st.binary(min_size=1, max_size=8))
    elif kind == "swap":
        text[i:j] = bytes(reversed(text[i:j]))
    else:
        numbers = list(re.finditer(rb"\d+(\.\d+)?", bytes(text)))
        if numbers:
            m = draw(st.sampled_from(numbers))
            repl = draw(st.sampled_from([b"-1", b"NaN", b"1e999", b"0", b"\"x\"", b"99999999"]))
            text[m.start():m.end()] = repl
    return name, bytes(text)


@pytest.fixture(scope="module")
def mutation_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("mut") / "m.duckdb"
    with store.writing(path):
        pass
    return path


@pytest.mark.skipif(not SEEDS, reason="no fixture files to mutate")
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(upload=mutated())
def test_mutated_files_are_imported_or_refused_never_a_crash(mutation_db, catalog, upload):
    name, data = upload
    with store.reading(mutation_db) as con:
        before = (store.count_runs(con), store.data_version(con))
    [result] = import_uploads([(name, data)], OPTIONS, mutation_db, catalog)
    with store.reading(mutation_db) as con:
        after = (store.count_runs(con), store.data_version(con))
    if result.ok:
        assert result.runs
    else:
        assert result.error.startswith(f"{name}: ")
        assert after == before
