"""schemathesis over the whole OpenAPI schema of a served opx, with a bounded number of examples
per operation (positive and negative inputs, and the writes with the admin token): no 5xx, no
response that contradicts the schema (status, media type, body)."""
import json
import os
import subprocess
import urllib.request
import sys

from tests.api.conftest import TOKEN

EXAMPLES = os.environ.get("OPX_SCHEMA_EXAMPLES", "10")
CHECKS = ("not_a_server_error,status_code_conformance,content_type_conformance,"
          "response_schema_conformance")


def test_schemathesis_finds_no_server_error_and_no_answer_off_the_schema(api, tmp_path):
    cmd = [sys.executable, "-m", "schemathesis.cli", "run", f"{api}/api/v1/openapi.json",
           "--checks", CHECKS, "--max-examples", EXAMPLES, "--workers", "2",
           "--phases", "fuzzing,stateful", "--mode", "all", "--seed", "46",
           "-H", f"Authorization: Bearer {TOKEN}", "--no-color"]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-6000:]
    # Every operation the schema lists is tested, counted from the schema so a new endpoint is in.
    with urllib.request.urlopen(f"{api}/api/v1/openapi.json") as response:
        paths = json.load(response)["paths"]
    count = sum(1 for item in paths.values() for method in item
                if method in {"get", "post", "put", "patch", "delete"})
    assert f"{count}/{count}" in out and " passed" in out, out[-3000:]
