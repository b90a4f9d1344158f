"""The embed view (`/embed`) and the share box's briefs and embed address, through AppTest."""
import json

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT


def run_app(page=None, **params):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    if page:
        at.switch_page(page)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def _charts(at):
    return [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]


@pytest.mark.parametrize("of, title", [("explorer", "vs interactivity"),
                                       ("compare", "across interactivity"),
                                       ("planner", "Fleet plan")])
def test_the_embed_view_shows_the_chart_alone(app_db, of, title):
    at = run_app("app_pages/embed.py", of=of, target="387", sessions="10000")
    assert not at.exception, [e.value for e in at.exception]
    [spec] = _charts(at)
    assert title in json.dumps(spec)
    assert not at.sidebar.children                                           # no sidebar
    assert not at.text_input and not at.selectbox and not at.number_input   # read-only
    assert "387 tok/s/user P90" in at.caption[0].value.replace("\\", "")


def test_the_share_box_offers_the_briefs_and_the_embed_address(app_db):
    at = run_app(target="500")
    assert not at.exception
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Brief (PDF, one page)" in labels and "Brief (HTML, offline)" in labels
    codes = [c.value for c in at.code]
    embed = next(c for c in codes if "/embed?of=explorer" in c and "<iframe" not in c)
    assert "target=500" in embed
    assert any(c.startswith("<iframe src=") and "/embed?of=explorer" in c for c in codes)


def test_the_embed_names_what_it_cannot_show(app_db):
    at = run_app("app_pages/embed.py", of="compare", ra="0123456789abcdef", rb="fedcba9876543210")
    assert not at.exception
    warnings = " ".join(w.value.replace("\\", "") for w in at.warning)
    assert "Run `0123456789abcdef` in the link no longer exists" in warnings
    caption = " ".join(c.value.replace("\\", "") for c in at.caption)
    assert "run 01234567" not in caption and "Vera Rubin NVL72 vs GB300 NVL72" in caption
    at = run_app("app_pages/embed.py", of="compare", view="no-such-view")
    assert any("no saved view" in w.value for w in at.warning)
