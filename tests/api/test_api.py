"""The JSON API of `python -m opx serve`, over HTTP: each page's answer is what `opx export`
writes for the same link, on views drawn from the database; hostile input is a 4xx
problem+json naming what is wrong; writes need the admin token and change nothing when refused."""
from __future__ import annotations

import io
import json
import os
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.documents import PAGE_DOCUMENTS, Problem
from opx import cli
from opx.links import build_link
from tests.api.conftest import TOKEN, call, serve
from tests.conftest import ROOT
from tests.unit.test_one_number import held, views  # noqa: F401  (the fixture and the strategy)

EXAMPLES = int(os.environ.get("OPX_PROPERTY_EXAMPLES", "24"))
PAGES = {"explorer": "/", "compare": "/compare", "planner": "/planner", "latency": "/latency"}


def export(db, link: str, fmt: str, tmp) -> bytes:
    """What `opx export LINK --format FMT` writes (the command line's own entry point)."""
    out = tmp / f"export.{fmt}"
    assert cli.main(["export", link, "--format", fmt, "-o", str(out), "--db", str(db)]) == 0
    return out.read_bytes()


def page_link(page: str, state) -> str:
    if page == "compare" and len(state.hw) >= 2:
        state = state.model_copy(update={"a": state.hw[0], "b": state.hw[1]})
    if page == "planner":
        state = state.model_copy(update={"sessions": 1000.0})
    return build_link(PAGES[page], state)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_pages_answer_is_what_export_writes(api, api_db, held, tmp_path, data):  # noqa: F811
    state = data.draw(views(held))
    page = data.draw(st.sampled_from(sorted(PAGES)))
    link = page_link(page, state)
    path, _, query = link.partition("?")
    name = "explorer" if path == "/" else path.strip("/")
    got = call(f"{api}/api/v1/{name}?{query}")
    assert got.status == 200, got.body[:500]
    assert got.type == "application/json"
    expected = export(api_db, f"{api}{link}", "json", tmp_path)
    assert got.json() == json.loads(expected)
    assert got.json()["link"].startswith(api)
    PAGE_DOCUMENTS[name].model_validate(got.json())       # the schema holds what is written


def test_simulate_and_a_saved_view_answer_as_export_does(api, api_db, tmp_path):
    for query in ("hw=b200&model=deepseek-r1&workload=1k1k&gpus=16&pct=p50&target=40",
                  "hw=vr-nvl72&target=200"):
        got = call(f"{api}/api/v1/simulate?{query}")
        assert got.status == 200, got.body[:300]
        assert got.json() == json.loads(export(api_db, f"{api}/simulate?{query}", "json", tmp_path))
        PAGE_DOCUMENTS["simulate"].model_validate(got.json())


@pytest.mark.parametrize("fmt", ["png", "svg", "vl.json", "csv", "parquet", "pdf"])
def test_a_chart_or_table_file_is_the_exports_bytes(api, api_db, tmp_path, fmt):
    query = "model=deepseek-v4.1-flash&workload=agentx&hw=vr-nvl72&hw=gb300-nvl72&pct=p50&target=200"
    got = call(f"{api}/api/v1/compare.{fmt}?{query}")
    assert got.status == 200, got.body[:300]
    expected = export(api_db, f"{api}/compare?{query}", fmt, tmp_path)
    if fmt == "pdf":            # a PDF names the moment it was made; its pages are the same
        assert got.body[:5] == b"%PDF-" and abs(len(got.body) - len(expected)) < 200
    else:
        assert got.body == expected
    signature = {"png": b"\x89PNG", "svg": b"<svg", "parquet": b"PAR1", "pdf": b"%PDF"}
    if fmt in signature:
        assert got.body.lstrip()[:4] == signature[fmt][:4]


def _problem(reply, status: int, parameter: str | None = None):
    assert reply.status == status, (reply.status, reply.body[:300])
    assert reply.type == "application/problem+json"
    body = Problem.model_validate(reply.json())
    assert body.status == status and body.detail
    assert "Traceback" not in body.detail
    if parameter is not None:
        assert body.parameter == parameter, body
    return body


@pytest.mark.parametrize("query, parameter", [
    ("pct=p91", "pct"), ("target=abc", "target"), ("target=-5", "target"),
    ("hw=nope", "hw"), ("model=%3Cscript%3E", "model"), ("frobnicate=1", "frobnicate"),
    ("y=watts", "y"), ("since=2026-13-45", "since"), ("gpus=many", "gpus"),
    ("target=1e400", "target"), ("hw=" + "x" * 5000, "hw"), ("target=387&zz=%00", "zz"),
])
def test_a_bad_or_unknown_parameter_is_a_400_that_names_it(api, query, parameter):
    body = _problem(call(f"{api}/api/v1/explorer?{query}"), 400, parameter)
    assert "LINK" in body.detail        # the command line's message


def test_unknown_things_are_404s_and_nothing_is_a_500(api):
    _problem(call(f"{api}/api/v1/explorer?view=no-such-view"), 404, "view")
    _problem(call(f"{api}/api/v1/runs/0000000000000000"), 404, "id")
    _problem(call(f"{api}/api/v1/nowhere"), 404)
    _problem(call(f"{api}/api/v1/explorer.gif"), 404, "format")
    _problem(call(f"{api}/api/v1/latency.brief-pdf"), 404, "format")
    _problem(call(f"{api}/api/v1/coverage", method="POST", body=b"x"), 405)
    _problem(call(f"{api}/api/v1/runs?hardware=nope"), 400, "hardware")
    _problem(call(f"{api}/api/v1/runs?limit=0"), 400, "limit")
    _problem(call(f"{api}/api/v1/runs?after=nope"), 400, "after")
    _problem(call(f"{api}/api/v1/runs?color=red"), 400, "color")
    _problem(call(f"{api}/api/v1/compare?ra=" + "%FF" * 30), 400, "ra")


def test_the_runs_listing_pages_through_what_runs_list_prints(api, api_db, capsys):
    assert cli.main(["runs", "list", "--format", "json", "--hardware", "b200", "--db",
                     str(api_db)]) == 0
    expected = json.loads(capsys.readouterr().out)
    got, url = [], f"{api}/api/v1/runs?hardware=b200&limit=37"
    while url:
        page = call(url).json()
        assert len(page["runs"]) <= 37
        got += page["runs"]
        url = page["next"]
    assert got == expected and len(got) > 37
    one = call(f"{api}/api/v1/runs/{expected[0]['id']}")
    assert cli.main(["runs", "show", expected[0]["id"], "--format", "json", "--db",
                     str(api_db)]) == 0
    assert one.json() == json.loads(capsys.readouterr().out)


def _vllm_file() -> bytes:
    return (ROOT / "tests" / "fixtures" / "vllm" / "metadata.json").read_bytes()


def _count(api) -> int:
    n, url = 0, f"{api}/api/v1/runs?limit=1000"
    while url:
        page = call(url).json()
        n += len(page["runs"])
        url = page["next"]
    return n


def test_writes_need_the_token_and_a_refusal_writes_nothing(api):
    before = _count(api)
    url = f"{api}/api/v1/runs?hardware=h100&gpus=8&model=llama-3.1-8b&filename=run.json"
    body = _vllm_file()
    _problem(call(url, "POST", body), 401)
    assert call(url, "POST", body).headers.get("www-authenticate", "").startswith("Bearer")
    _problem(call(url, "POST", body, token="wrong"), 403)
    _problem(call(url, "POST", b"{not json", token=TOKEN), 400, "body")
    _problem(call(f"{api}/api/v1/runs?gpus=zero", "POST", body, token=TOKEN), 400, "gpus")
    _problem(call(f"{api}/api/v1/runs?colour=1", "POST", body, token=TOKEN), 400, "colour")
    assert _count(api) == before

    made = call(url, "POST", body, token=TOKEN)
    assert made.status == 201, made.body[:400]
    summary = made.json()
    assert summary["runs_added"] >= 1 and summary["files"][0]["ok"]
    assert _count(api) == before + summary["runs_added"]
    again = call(url, "POST", body, token=TOKEN)            # a re-import changes nothing
    assert again.status == 200 and again.json()["runs_added"] == 0

    runs = call(f"{api}/api/v1/runs?hardware=h100&model=llama-3.1-8b&limit=1000").json()["runs"]
    run_id = next(r["id"] for r in runs if r["points"])
    _problem(call(f"{api}/api/v1/runs/{run_id}", "DELETE"), 401)
    _problem(call(f"{api}/api/v1/runs/{run_id}", "DELETE", token="wrong"), 403)
    assert call(f"{api}/api/v1/runs/{run_id}").status == 200
    gone = call(f"{api}/api/v1/runs/{run_id}", "DELETE", token=TOKEN)
    assert gone.status == 200 and gone.json() == {"deleted": run_id}
    _problem(call(f"{api}/api/v1/runs/{run_id}"), 404)
    _problem(call(f"{api}/api/v1/runs/{run_id}", "DELETE", token=TOKEN), 404)


def test_a_body_over_the_upload_limit_is_a_413_before_it_is_sent(api):
    """.streamlit/config.toml: maxUploadSize = 64 (MB). The server answers on the declared length,
    while the client has sent a first megabyte of it."""
    import http.client
    host = urllib.parse.urlsplit(api).netloc
    conn = http.client.HTTPConnection(host, timeout=60)
    conn.putrequest("POST", "/api/v1/runs?filename=big.json")
    conn.putheader("Authorization", f"Bearer {TOKEN}")
    conn.putheader("Content-Length", str(65 * 1024 * 1024))
    conn.endheaders()
    conn.send(b"0" * (1024 * 1024))
    reply = conn.getresponse()
    assert reply.status == 413
    assert reply.getheader("content-type").startswith("application/problem+json")
    assert "upload limit" in json.loads(reply.read())["detail"]
    conn.close()


def test_read_only_or_tokenless_servers_refuse_every_write(api_db, tmp_path):
    import shutil
    db = tmp_path / "ro.duckdb"
    shutil.copy(api_db, db)
    for env in ({"OPX_READ_ONLY": "1", "OPX_ADMIN_TOKEN": TOKEN}, {}):
        with serve(db, **env) as url:
            before = call(f"{url}/api/v1/runs?limit=1000").body
            body = _problem(call(f"{url}/api/v1/runs?filename=r.json", "POST", _vllm_file(),
                                 token=TOKEN), 403)
            assert ("read-only" in body.detail) == bool(env)
            some = call(f"{url}/api/v1/runs?limit=1").json()["runs"][0]["id"]
            _problem(call(f"{url}/api/v1/runs/{some}", "DELETE", token=TOKEN), 403)
            assert call(f"{url}/api/v1/runs?limit=1000").body == before


def test_the_schema_is_valid_openapi_3_1_and_names_every_operation(api):
    from openapi_spec_validator import validate
    reply = call(f"{api}/api/v1/openapi.json")
    schema = reply.json()
    validate(schema)
    assert schema["openapi"] == "3.1.0"
    ops = {(m.upper(), p) for p, item in schema["paths"].items() for m in item}
    for must in [("GET", "/api/v1/explorer"), ("GET", "/api/v1/compare.{format}"),
                 ("GET", "/api/v1/runs"), ("POST", "/api/v1/runs"), ("GET", "/api/v1/runs/{id}"),
                 ("DELETE", "/api/v1/runs/{id}"), ("GET", "/api/v1/coverage")]:
        assert must in ops
    params = {p["name"] for p in schema["paths"]["/api/v1/compare"]["get"]["parameters"]}
    assert {"a", "b", "model", "workload", "pct", "target", "hw", "view"} <= params


def test_twenty_concurrent_clients_get_the_same_answers(api):
    urls = [f"{api}/api/v1/{p}?pct={q}" for p in ("explorer", "compare", "planner", "latency")
            for q in ("p50", "p90")] + [f"{api}/api/v1/runs?limit=50", f"{api}/api/v1/coverage"]
    alone = {u: call(u).json() for u in urls}
    with ThreadPoolExecutor(20) as pool:
        replies = list(pool.map(lambda u: (u, call(u)), urls * 6))
    for u, r in replies:
        assert r.status == 200, r.body[:200]
        assert r.json() == alone[u]


def test_the_link_is_the_address_that_was_asked(api):
    reply = call(f"{api}/api/v1/compare", headers={"Host": "opx.example.org:8443",
                                                   "X-Forwarded-Proto": "https"})
    assert reply.json()["link"].startswith("https://opx.example.org:8443/compare?")
