"""The sample files every ingest test draws on: the real files of ../shared/fixtures (absent in
some checkouts: tests that need them skip) and our own in tests/fixtures, with the format that
owns each, and small helpers for a format module's tests."""
from __future__ import annotations

from pathlib import Path

import pytest

from models import Point
from opx.ingest.base import FormatError, Record
from tests.conftest import ROOT, SHARED_FIXTURES

SHARED = SHARED_FIXTURES
OWN = ROOT / "tests" / "fixtures"
needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(),
    reason=f"{SHARED} is absent: the real sample files live outside the repository")

# The format that owns the files of each top-level folder (`dashboards/<x>`: of its sub-folder).
OWNER_BY_FOLDER = {"vllm": "vllm", "sglang": "sglang", "genai-perf": "genai-perf",
                   "aiperf": "aiperf", "llmperf": "llmperf", "trtllm-bench": "trtllm-bench",
                   "inferencex": "inferencex", "inferencex-harness": "inferencex",
                   "aiconfigurator": "aiconfigurator", "opx-csv": "opx-csv"}
# Files whose owner is not their folder's: InferenceX's harness keeps vLLM's raw output, and
# some of our broken files show too little of their format for any sniffer (they are refused as
# "not a known format", or with the owner's message under --format).
OWNER_BY_FILE = {
    "inferencex-harness/concurrency_64_req_rate_inf_gpus_16_ctx_8_gen_8.json": "vllm",
    **{f"vllm/bad/{name}.json": None for name in ("empty", "empty_list", "list_of_numbers",
                                                  "not_a_result", "string", "truncated")},
    **{f"sglang/bad/{name}.jsonl": None for name in ("empty", "no_completed", "string")},
}
# Files outside `bad/` folders that are refused on purpose, with a reason (per-request records,
# a run whose every request failed, a sweep's warm-up run).
REFUSED = {"vllm/bench_serve_all_requests_failed_v0.25.1.json", "vllm/sweep_warmup.json",
           "aiperf/profile_export.jsonl", "aiperf/v0.8.0_inferencex_run/profile_export.jsonl",
           "genai-perf/simple_medium_response_c1.json", "llmperf/individual/groq_70b.json",
           "llmperf/mistral-7b_100_50_individual_responses.json",
           "trtllm-bench/request_records.json"}


def owner_of(relative: str) -> str | None:
    """The format that must claim a sample file, by its path under its fixtures folder."""
    if relative in OWNER_BY_FILE:
        return OWNER_BY_FILE[relative]
    parts = relative.split("/")
    return OWNER_BY_FOLDER.get(parts[1] if parts[0] == "dashboards" else parts[0])


def sample_files() -> list:
    """Every shared and own sample file (README-like .md files aside), as pytest params
    (path, owner, good), named by the folder they are in: `fixtures/...` (shared) or
    `tests/fixtures/...` (own). `good`: a file that imports (not bad, not refused)."""
    params = []
    for root in (SHARED, OWN):
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if path.is_file() and path.suffix != ".md":
                relative = path.relative_to(root).as_posix()
                good = "bad" not in relative.split("/") and relative not in REFUSED
                params.append(pytest.param(path, owner_of(relative), good,
                                           id=str(path.relative_to(root.parent))))
    return params


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def parse_one(module, path: Path, text: str | None = None) -> Record:
    """The single record a summary file gives; its point must pass the model's validation."""
    records = module.parse(path, read(path) if text is None else text)
    assert len(records) == 1
    Point(**records[0].point)
    assert "gpus_total" not in records[0].run and "provenance" not in records[0].run
    return records[0]


def refusal(module, path: Path, text: str | None = None) -> FormatError:
    assert module.sniff(path, read(path) if text is None else text), "claimed before refused"
    with pytest.raises(FormatError) as info:
        module.parse(path, read(path) if text is None else text)
    return info.value
