"""Two opx replicas behind nginx over one PostgreSQL database, in Chromium (deploy/demo.py).

A browser session must reach one replica for its page, websocket, media files and uploads; when
that replica dies the browser is handed to the other, keeps its view (the address holds it), and
stays there, even once the dead replica is back.

Needs nginx and PostgreSQL's server (deploy/pgcluster.py); without them the tests skip with
the reason (in CI, CI=true, a missing nginx or PostgreSQL fails, as a missing Chromium does).
OPX_E2E_REPLICA_DB=URL-or-file runs them over that database instead (e.g. a DuckDB file, which
several replicas can read).
"""
from __future__ import annotations

import json
import os
import re
import time
import urllib.request
import uuid
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from deploy import pgcluster
from deploy.demo import STICKY_COOKIE, Demo, nginx_unavailable
from tests.conftest import ROOT, require
from tests.e2e.conftest import wait_for_app

pytestmark = pytest.mark.e2e

VIEW = "/?hw=vr-nvl72&hw=gb300-nvl72&target=300"
TARGET_BOX = "Typed target (tok/s/user)"
# nginx leaves a failed replica alone this long; short, so a restarted one is back in the test.
FAIL_TIMEOUT = "2s"


def _require(reason: str | None) -> None:
    require(reason, "the replica")


@pytest.fixture(scope="module")
def database():
    given = os.environ.get("OPX_E2E_REPLICA_DB")
    if given:
        yield given
        return
    _require(pgcluster.unavailable())
    with pgcluster.Cluster() as cluster:
        yield cluster.url


@pytest.fixture(scope="module")
def demo(database, browser):
    _require(nginx_unavailable())
    env = dict(os.environ)
    env.pop("OPX_READ_ONLY", None)
    env.pop("OPX_ADMIN_TOKEN", None)
    try:
        with Demo(replicas=2, db=database, say=lambda line: None, env=env,
                  fail_timeout=FAIL_TIMEOUT) as running:
            yield running
    except RuntimeError as exc:
        pytest.fail(str(exc))


@pytest.fixture
def browser_session(browser):
    """A browser of its own (its own cookies), named by its user agent in nginx's access log."""
    name = f"opx-e2e-{uuid.uuid4().hex[:12]}"
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, user_agent=name)
    page = context.new_page()
    page.sockets = []
    page.on("websocket", lambda ws: page.sockets.append(ws.url))
    yield name, context, page
    context.close()


def _requests_of(demo: Demo, user_agent: str):
    return [e for e in demo.access_log() if e.user_agent == user_agent]


def _pinned(context) -> str:
    return next((c["value"] for c in context.cookies() if c["name"] == STICKY_COOKIE), "")


def _wait_until(condition, what: str, timeout: float = 30.0, page=None):
    """Poll `condition`; with `page`, wait through Playwright so its events keep coming."""
    deadline = time.monotonic() + timeout
    while not (result := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:.0f} s: {what}")
        if page is not None:
            page.wait_for_timeout(100)
        else:
            time.sleep(0.1)
    return result


def _download_summary(page, tmp_path) -> dict:
    """The view's JSON summary: built by the session's replica and served from its memory
    (/media/...)."""
    with page.expect_download(timeout=60_000) as download:
        page.get_by_test_id("stDownloadButton").filter(has_text="JSON summary").click()
    path = tmp_path / f"summary-{uuid.uuid4().hex[:6]}.json"
    download.value.save_as(path)
    return json.loads(path.read_text())


def _open_view(demo: Demo, page) -> dict[str, list[str]]:
    page.goto(demo.proxy_url + VIEW)
    wait_for_app(page)
    expect(page.get_by_label(TARGET_BOX)).to_have_value("300.00", timeout=30_000)
    query = parse_qs(urlsplit(page.url).query)
    assert query["target"] == ["300"] and query["hw"] == ["vr-nvl72", "gb300-nvl72"]
    return query


def test_one_browser_reaches_one_replica_for_page_websocket_and_media(demo, browser_session,
                                                                      tmp_path):
    name, context, page = browser_session
    _open_view(demo, page)
    assert "target=300" in _download_summary(page, tmp_path)["link"]
    box = page.get_by_label(TARGET_BOX)
    box.fill("320")
    box.press("Enter")
    wait_for_app(page)
    expect(page).to_have_url(re.compile(r"target=320"), timeout=15_000)
    pinned = _pinned(context)
    context.close()           # nginx logs a websocket when it closes
    _wait_until(lambda: any(e.kind == "websocket" for e in _requests_of(demo, name)),
                "the websocket's line in nginx's access log")
    entries = _requests_of(demo, name)

    assert {"page", "websocket", "media"} <= {e.kind for e in entries}
    assert {e.served for e in entries} == {pinned}, [(e.path, e.served) for e in entries]
    # The proxy named the replica on its first answer; every later request carried the cookie.
    assert entries[0].pinned == ""
    assert all(e.pinned == pinned for e in entries[1:]), [(e.path, e.pinned) for e in entries]


def test_a_killed_replica_hands_the_browser_to_the_other_with_the_same_view(
        demo, browser_session, tmp_path):
    name, context, page = browser_session
    query = _open_view(demo, page)
    first = _pinned(context)
    assert {e.served for e in _requests_of(demo, name)} == {first}
    names = [r.name for r in demo.replicas]
    logged_before_kill = len(_requests_of(demo, name))
    killed_at = time.monotonic()
    demo.kill(names.index(first))

    # The client sees its websocket close and reconnects through the proxy, which passes it to
    # the live replica. The page on screen is the one the dead replica drew: same address, same
    # target. The new replica holds a fresh session that has not run yet.
    _wait_until(lambda: len(page.sockets) >= 2, "a second websocket to the proxy", page=page)
    assert all(url.startswith(demo.proxy_url.replace("http", "ws")) for url in page.sockets)
    wait_for_app(page, timeout=60_000)
    expect(page.get_by_label(TARGET_BOX)).to_have_value("300.00", timeout=30_000)
    print(f"\nfailover: connected again, same view, {time.monotonic() - killed_at:.1f} s after "
          "the kill")
    assert parse_qs(urlsplit(page.url).query) == query
    survivor = _pinned(context)
    assert survivor in names and survivor != first

    # A download clicked before anything else is made by the new replica (the page it drew
    # is on screen, and the file is its own)
    assert "target=300" in _download_summary(page, tmp_path)["link"]

    # The first change runs the page on the new replica. Its fresh session gets every widget's
    # value from the browser with it: they win over the address (which still says 300), so the
    # change stands, and the address follows it.
    box = page.get_by_label(TARGET_BOX)
    box.fill("350")
    box.press("Enter")
    wait_for_app(page)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    expect(page).to_have_url(re.compile(r"target=350"), timeout=15_000)
    expect(box).to_have_value("350.00")
    expect(page.get_by_text("Multiple at the target, 350 tok/s/user")).to_be_visible()
    assert parse_qs(urlsplit(page.url).query)["hw"] == query["hw"]

    # From then on the new replica serves this session: another change, a download (a media
    # file in its memory) and an upload (its XSRF cookie came from the dead replica).
    box.fill("360")
    box.press("Enter")
    wait_for_app(page)
    expect(page).to_have_url(re.compile(r"target=360"), timeout=15_000)
    expect(page.get_by_text("Multiple at the target, 360 tok/s/user")).to_be_visible()
    assert "target=360" in _download_summary(page, tmp_path)["link"]
    _check_an_upload(page)
    since_kill = _requests_of(demo, name)[logged_before_kill:]
    # (nginx logs a websocket when it ends: the one the kill cut was the dead replica's)
    assert [e.served for e in since_kill if e.kind == "websocket"] == [first]
    moved = [e for e in since_kill if e.kind in ("media", "upload")]
    assert {"media", "upload"} <= {e.kind for e in moved}
    assert {e.served for e in moved} == {survivor}, [(e.path, e.served) for e in moved]
    assert all(e.status < 400 for e in moved), [(e.path, e.status) for e in moved]
    logged_before_restart = len(_requests_of(demo, name))

    # The dead replica comes back and nginx takes it again; this browser stays on the survivor,
    # where its session is (its cookie names the survivor now).
    restarted = demo.restart(names.index(first))
    _wait_until(lambda: _served_when_pinned_to(demo, restarted.name) == restarted.name,
                f"nginx sending {restarted.name}'s browsers to it again")
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Explorer").click()
    wait_for_app(page)
    expect(page.get_by_label(TARGET_BOX)).to_have_value("360.00", timeout=30_000)
    assert "target=360" in _download_summary(page, tmp_path)["link"]
    later = _requests_of(demo, name)[logged_before_restart:]
    assert any(e.kind == "media" for e in later)
    assert {e.served for e in later} == {survivor}, [(e.path, e.served) for e in later]
    expect(page.get_by_test_id("stException")).to_have_count(0)


def _check_an_upload(page) -> None:
    """Upload a result file on the Data page and have the session's replica read it (a check,
    which imports nothing)."""
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Data").click()
    wait_for_app(page)
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
        str(ROOT / "tests" / "fixtures" / "opx-csv" / "h200-sweep-part1.csv"))
    wait_for_app(page)
    check = page.get_by_role("button", name="Check without importing")
    expect(check).to_be_enabled(timeout=20_000)
    check.click()
    wait_for_app(page)
    expect(page.get_by_text("1 file(s) valid, 0 refused.")).to_be_visible(timeout=20_000)


def _served_when_pinned_to(demo: Demo, replica: str) -> str:
    """Which replica the proxy picks now for a browser whose cookie names `replica`."""
    request = urllib.request.Request(f"{demo.proxy_url}/_stcore/health",
                                     headers={"Cookie": f"{STICKY_COOKIE}={replica}",
                                              "User-Agent": "opx-e2e-probe"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            set_cookie = " ".join(response.headers.get_all("Set-Cookie") or [])
    except OSError:
        return ""
    moved = re.search(rf"{STICKY_COOKIE}=(\w+)", set_cookie)
    return moved.group(1) if moved else replica


def test_a_run_imported_elsewhere_shows_on_a_page_opened_afresh_on_each_replica(
        demo, database, browser, tmp_path):
    """A benchmark host imports a run with `ingest` while both replicas serve: a page opened
    afresh on either (a new browser, straight to the replica) lists it."""
    import subprocess
    import sys
    label = f"elsewhere-{uuid.uuid4().hex[:8]}"
    before = []
    for replica in demo.replicas:      # each replica has served (and cached) the runs first
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.goto(f"{replica.url}/data?q={label}")
        wait_for_app(page)
        before.append(page.get_by_text(re.compile(r"^0 of \d+ run\(s\)$")))
        expect(before[-1]).to_be_visible(timeout=30_000)
        context.close()
    csv = tmp_path / "elsewhere.csv"
    csv.write_text("hardware,model,workload,gpus_total,label,framework,concurrency,"
                   f"interactivity_p90,throughput_total_per_gpu\n"
                   f"h200,deepseek-r1,1k1k,8,{label},vllm,4,80,900\n")
    done = subprocess.run([sys.executable, "-m", "opx", "ingest", str(csv), "--db", database],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for replica in demo.replicas:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.goto(f"{replica.url}/data?q={label}")
        wait_for_app(page)
        expect(page.get_by_text(re.compile(r"^1 of \d+ run\(s\)$"))).to_be_visible(timeout=30_000)
        context.close()


def test_the_api_and_mcp_answer_through_the_proxy(demo):
    """/api/v1 and /mcp pass through nginx like the pages: the answer's link is the proxy's
    address, and an unknown value is still a problem naming it."""
    import json as _json
    with urllib.request.urlopen(f"{demo.proxy_url}/api/v1/compare?pct=p90", timeout=60) as r:
        doc = _json.loads(r.read())
    assert doc["link"].startswith(demo.proxy_url + "/compare?")
    try:
        urllib.request.urlopen(f"{demo.proxy_url}/api/v1/compare?a=nope", timeout=60)
        raise AssertionError("an unknown hardware was answered")
    except urllib.error.HTTPError as e:
        assert e.code == 400 and _json.loads(e.read())["parameter"] == "a"
    import anyio
    from mcp.client.client import Client

    async def tools():
        async with Client(f"{demo.proxy_url}/mcp") as client:
            return {t.name for t in (await client.list_tools()).tools}
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(1) as pool:      # Playwright's loop runs in this thread
        assert "figure_at_target" in pool.submit(anyio.run, tools).result(timeout=120)
