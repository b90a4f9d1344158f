"""docs/api.md is the API's reference: every operation has a curl example there, and every
example runs, as written, against a served opx (from the repository's root, as a reader would)."""
from __future__ import annotations

import json
import re
import subprocess

import pytest

from opx.api.endpoints import ENDPOINTS
from tests.api.conftest import TOKEN
from tests.conftest import ROOT

DOC = (ROOT / "docs" / "api.md").read_text()
BLOCKS = re.findall(r"```sh\n(.*?)```", DOC, flags=re.S)


def _curls() -> list[str]:
    return [line for block in BLOCKS for line in block.replace("\\\n", " ").splitlines()
            if "curl " in line]


def _method(line: str) -> str:
    m = re.search(r"-X (\w+)", line)
    return m.group(1) if m else "POST" if "--data-binary" in line else "GET"


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: f"{e.method} {e.path}")
def test_every_operation_has_a_curl_example(endpoint):
    pattern = re.escape(endpoint.path).replace(r"\{format\}", r"[\w.-]+").replace(r"\{id\}", r"\$\w+")
    found = [line for line in _curls() if _method(line) == endpoint.method
             and re.search(r'\$OPX' + pattern + r'(\?|")', line)]
    assert found, f"docs/api.md has no curl example of {endpoint.method} {endpoint.path}"


def test_every_example_runs_as_written(api, tmp_path):
    env = {"PATH": "/usr/bin:/bin", "OPX": api, "OPX_ADMIN_TOKEN": TOKEN}
    for block in BLOCKS:
        script = "set -euo pipefail\n" + block.replace("export OPX=http://localhost:8501", "")
        # files a block writes go to a temporary folder; the file it posts is the repository's
        script = script.replace("@tests/", f"@{ROOT}/tests/")
        r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env,
                           cwd=tmp_path, timeout=300)
        assert r.returncode == 0, f"{block}\n{r.stdout[-1000:]}\n{r.stderr[-1000:]}"
        if "curl -s " in block:          # the errors' examples: problems, never a 5xx
            text, seen = r.stdout.strip(), 0
            while text:              # the problems, one after the other
                problem, end = json.JSONDecoder().raw_decode(text)
                assert 400 <= problem["status"] < 500, problem
                text, seen = text[end:].strip(), seen + 1
            assert seen == block.count("curl -s ")
    for written in ("compare.png", "explorer.csv", "planner-brief.pdf"):
        assert (tmp_path / written).stat().st_size > 0
    assert (tmp_path / "compare.png").read_bytes()[:4] == b"\x89PNG"
