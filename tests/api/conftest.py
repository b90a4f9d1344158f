"""`python -m opx serve` for real on a free port, over a copy of the database `make run` builds,
with an admin token; programs talk to it over HTTP as a user's would."""
from __future__ import annotations

import json
import os
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from bench.serving import served
from tests.conftest import ROOT

TOKEN = "test-admin-token-4f1c"


@pytest.fixture(scope="module")
def api_db(full_db, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("api") / "opx.duckdb"
    shutil.copy(full_db, path)
    return path


def serve(db, **env_more):
    env = {**os.environ, "OPX_DB": str(db), **env_more}
    for name in ("OPX_READ_ONLY", "OPX_ADMIN_TOKEN", "OPX_BASE_URL"):
        if name not in env_more:
            env.pop(name, None)
    return served(ROOT / "serve.py", env, timeout=90)


@pytest.fixture(scope="module")
def api(api_db):
    with serve(api_db, OPX_ADMIN_TOKEN=TOKEN) as url:
        yield url


class Reply:
    def __init__(self, status: int, headers, body: bytes):
        self.status, self.headers, self.body = status, headers, body

    @property
    def type(self) -> str:
        return (self.headers.get("content-type") or "").split(";")[0]

    def json(self):
        return json.loads(self.body)


def call(url: str, method: str = "GET", body: bytes | None = None, token: str | None = None,
         headers: dict | None = None, timeout: float = 120) -> Reply:
    h = dict(headers or {})
    if token is not None:
        h["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=body, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return Reply(r.status, r.headers, r.read())
    except urllib.error.HTTPError as e:
        return Reply(e.code, e.headers, e.read())
