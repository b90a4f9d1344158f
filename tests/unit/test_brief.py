"""The brief of a view (opx.publish.brief): its figures are the page's and the JSON export's, the PDF is
one landscape page whatever the view holds, the HTML fetches nothing and runs nothing, and the
same link on the same data gives the same brief apart from its date."""
import dataclasses
import datetime as dt
import io
import json
import re
import subprocess
import sys
from html.parser import HTMLParser

import pytest
from pypdf import PdfReader

from opx.publish import brief as briefs

from opx.publish import brief_html

from opx.publish import brief_pdf

from opx.publish import export

from opx.publish import render
from opx.publish.brief import Evidence, Headline, Table
from opx.links import EMBED_PATH, embed_link, embedded_path, parse_link
from tests.conftest import ROOT
from tests.unit.test_hostile_text import SCRIPT_LABEL, hostile, hostile_links  # noqa: F401

DAY = dt.date(2026, 12, 1)
SEED = "/"
COMPARE = "/compare?a=vr-nvl72&b=gb300-nvl72"
PLANNER = "/planner?sessions=10000"


@pytest.fixture(scope="module")
def seed_brief(seed_db, catalog):
    return briefs.build(parse_link(SEED), seed_db, catalog, as_of=DAY)


def _pdf(data: bytes) -> tuple[int, str]:
    reader = PdfReader(io.BytesIO(data))
    return len(reader.pages), " ".join(p.extract_text() for p in reader.pages)


def test_the_headline_multiples_are_the_json_exports(seed_db, catalog, seed_brief):
    summary = json.loads(render.render_link(parse_link(SEED), "json", seed_db, catalog))
    vr = next(h for h in summary["hardware"] if h["hardware"] == "vr-nvl72")
    by_kind = {h.kind: h for h in seed_brief.headlines}
    assert by_kind["at target"].number == vr["multiple_at_target"]
    assert by_kind["at peak"].number == vr["multiple_at_peak"]
    assert (by_kind["at target"].value, by_kind["at peak"].value) == ("58×", "2.7×")
    assert by_kind["at target"].caption.endswith("preview vs derived")
    assert seed_brief.title == ("Vera Rubin NVL72 vs GB300 NVL72, DeepSeek-V4.1-Flash on AgentX "
                                "(agentic coding), at 387 tok/s/user P90")
    compare = json.loads(render.render_link(parse_link(COMPARE), "json", seed_db, catalog))
    c = briefs.build(parse_link(COMPARE), seed_db, catalog, as_of=DAY)
    assert [h.number for h in c.headlines] == [compare["multiple_at_target"],
                                               compare["multiple_at_peak"]]
    assert c.headlines[0].label == "Vera Rubin NVL72 ÷ GB300 NVL72"


def test_the_brief_carries_its_evidence(seed_brief):
    provs = {e.provenance for e in seed_brief.evidence}
    assert {"preview", "derived"} <= provs
    assert any("vLLM (Inferact)" in s for e in seed_brief.evidence for s in e.sources)
    assert seed_brief.link.startswith("http://localhost:8501/?model=deepseek-v4.1-flash")
    assert any("assumed" in a for a in seed_brief.assumptions)
    assert re.fullmatch(r"sha256:[0-9a-f]{16}", seed_brief.fingerprint)
    rows = {r[0]: r[1:] for r in seed_brief.table.rows}
    assert seed_brief.table.columns == ["Hardware", "Vera Rubin NVL72", "GB300 NVL72"]
    assert rows["At 387 tok/s/user (tok/s/GPU)"] == ["1.7M", "29.3k"]


def test_the_pdf_is_one_landscape_page_with_the_headline_multiples(seed_brief):
    data = brief_pdf.render(seed_brief)
    assert data[:5] == b"%PDF-"
    pages, text = _pdf(data)
    assert pages == 1
    assert len(re.findall(rb"/Type\s*/Page\b", data)) == 1
    box = PdfReader(io.BytesIO(data)).pages[0].mediabox
    assert float(box.width) > float(box.height)                      # landscape
    for words in ("58×", "2.7×", "Multiple at the target", "Multiple at peak", "preview",
                  "derived", "simulated", "vLLM (Inferact)", seed_brief.fingerprint,
                  "2026-12-01", "http://localhost:8501/?model=deepseek-v4.1-flash"):
        assert words in text, words


def test_a_brief_too_long_for_a_page_is_cut_and_stays_one_page(seed_brief):
    many = dataclasses.replace(
        seed_brief,
        title="A very long question " * 8,
        headlines=[Headline("at target", "Multiple at the target", f"System {i} ÷ Base",
                            f"{i}×", "x" * 300, float(i)) for i in range(12)],
        table=Table(["Hardware", *[f"System {i}" for i in range(9)]],
                    [[f"Row {r}", *["a long cell " * 12] * 9] for r in range(30)]),
        evidence=[Evidence("measured", 500, 9000, [f"source {i} " * 20 for i in range(400)])],
        assumptions=[f"assumption {i} " * 30 for i in range(40)],
        notes=[f"note {i} " * 30 for i in range(60)], fleet_notes=["fleet " * 200])
    pages, text = _pdf(brief_pdf.render(many))
    assert pages == 1
    assert "more" in text and "System 0" in text


def test_the_pdf_never_says_and_n_more_under_a_heading_with_nothing_above(seed_db, catalog):
    """A list with no room for its first item says so and where it is, not "and N more"."""
    brief = briefs.build(parse_link(COMPARE), seed_db, catalog, as_of=DAY)
    _, text = _pdf(brief_pdf.render(brief))
    notes = text[text.rindex("Notes"):]
    assert not re.match(r"Notes\s+and \d+ more", notes), notes[:200]
    assert brief_pdf._more([], 4) == "4 not shown for want of room: see the HTML brief"
    assert brief_pdf._more(["a"], 4) == "and 3 more" and brief_pdf._more(["a"], 1) == ""


def test_the_same_link_on_the_same_data_gives_the_same_brief(seed_db, catalog):
    for link in (SEED, COMPARE, PLANNER):
        one = briefs.build(parse_link(link), seed_db, catalog, as_of=DAY)
        two = briefs.build(parse_link(link), seed_db, catalog, as_of=DAY)
        assert brief_html.render(one) == brief_html.render(two), link
        # the same text on the page (vl-convert may number the chart's fonts in another order)
        assert _pdf(brief_pdf.render(one)) == _pdf(brief_pdf.render(two)), link
    later = briefs.build(parse_link(SEED), seed_db, catalog, as_of=DAY + dt.timedelta(days=3))
    first = briefs.build(parse_link(SEED), seed_db, catalog, as_of=DAY)
    assert later.fingerprint == first.fingerprint
    assert brief_html.render(later).replace(b"2026-12-04", b"2026-12-01") == \
        brief_html.render(first)


class _Resources(HTMLParser):
    """Every URL the page would fetch or run: src, href (other than a link to follow), CSS url()."""

    def __init__(self):
        super().__init__()
        self.fetched, self.tags = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "srcset", "data", "poster", "background", "xlink:href") or \
                    name == "href" and tag != "a":
                self.fetched.append((tag, name, value))


@pytest.mark.parametrize("link", [SEED, COMPARE, PLANNER, "/overview?pct=mean"])
def test_the_html_fetches_nothing_and_runs_nothing(seed_db, catalog, link):
    page = render.render_link(parse_link(link), "brief-html", seed_db, catalog).decode()
    parser = _Resources()
    parser.feed(page)
    assert parser.fetched == []
    assert "script" not in parser.tags and "iframe" not in parser.tags
    assert "link" not in parser.tags and "img" not in parser.tags
    assert not re.search(r"url\((?!#)|@import", page)      # url(#gradient) is in the page
    assert "default-src 'none'" in page                     # and the browser is told so
    assert "<svg" in page and "58×" in page or link in (PLANNER, "/overview?pct=mean")


def test_the_planner_brief_holds_the_fleet_plan(seed_db, catalog):
    b = briefs.build(parse_link(PLANNER), seed_db, catalog, as_of=DAY)
    assert b.title.startswith("Fleet for 10,000 concurrent sessions")
    assert b.table_title == "Fleet plan" and b.table.rows[0][0] == "Rank"
    assert b.headlines[0].kind == "fleet" and "GPUs" in b.headlines[0].caption
    pages, text = _pdf(brief_pdf.render(b))
    assert pages == 1 and "Fleet plan" in text and "GPUs" in text


def test_hostile_labels_stay_text_in_the_brief(hostile, catalog):
    db, ids = hostile
    for name, link in hostile_links(ids).items():
        page = render.render_link(parse_link(link), "brief-html", db, catalog).decode()
        assert "<script" not in page.lower(), name
        assert SCRIPT_LABEL not in page, name
        assert export.html_text(SCRIPT_LABEL) in page or name == "planner", name
        assert _pdf(render.render_link(parse_link(link), "brief-pdf", db, catalog))[0] == 1


def test_a_brief_of_another_page_is_an_error(seed_db, tmp_path):
    out = tmp_path / "b.pdf"
    r = subprocess.run([sys.executable, "-m", "opx", "export", "/latency", "--format",
                        "brief-pdf", "-o", str(out), "--db", str(seed_db)], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and r.stderr.startswith("error:") and not out.exists()


def test_the_cli_writes_a_brief(seed_db, tmp_path):
    out = tmp_path / "seed.pdf"
    r = subprocess.run([sys.executable, "-m", "opx", "export", COMPARE, "--format", "brief-pdf",
                        "-o", str(out), "--db", str(seed_db)], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    pages, text = _pdf(out.read_bytes())
    assert pages == 1 and "58×" in text and "2.7×" in text


@pytest.mark.parametrize("path", ["/", "/compare", "/planner"])
def test_an_embed_address_opens_the_same_view(path):
    link = parse_link(path + "?target=500&hw=h200&hw=b200&sessions=100&a=h200&b=b200")
    src = embed_link(path, link.state, "http://opx.internal")
    assert src.startswith(f"http://opx.internal{EMBED_PATH}?of=")
    back = parse_link(src.replace("&embed=true", ""))
    assert back.page == "embed" and not back.notices
    assert embedded_path(back.state) == path
    fields = ("target", "hw", "sessions" if path == "/planner" else "target",
              *(("a", "b") if path == "/compare" else ()))
    assert all(getattr(back.state, f) == getattr(link.state, f) for f in fields)


@pytest.mark.parametrize("link", [
    "/", "/?model=deepseek-r1&workload=1k1k&pct=mean&hw=gb200-nvl72&hw=b200&hw=h200",
    "/compare", "/planner", "/overview?pct=mean"])
def test_a_brief_cuts_no_word_and_repeats_no_label(full_db, catalog, link):
    """What a page has no room for is cut between words (" …") or left to "and N more", never
    inside a word; the caveats are written whole; no label is said twice in a row."""
    brief = briefs.build(parse_link(link), full_db, catalog, as_of=DAY)
    _, text = _pdf(brief_pdf.render(brief))
    flat = " ".join(text.split())
    assert not re.search(r"\w…", flat), re.findall(r".{30}\w…", flat)[:3]
    assert "error: Simulated curves' error" not in flat
    for caveat in brief.caveats:
        assert " ".join(caveat.split()) in flat.replace("- ", "-"), caveat
