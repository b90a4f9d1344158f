"""The Overview (`/overview`): every figure equals the Explorer's export for that slice and target,
drawn at random over what the database holds; rows, scores and exports."""
from __future__ import annotations

import io
import json
import random

import pandas as pd
import pytest

from models import ViewState
from opx.answers import overview
from opx.links import parse_link
from opx.publish import render

FIELDS = ("at_target", "at_target_how", "at_target_kind", "at_target_bound", "at_target_spread",
          "reachable", "multiple_at_target", "multiple_at_target_text",
          "multiple_at_target_range")


@pytest.mark.parametrize("pct", ["mean", "p50", "p90"])
def test_cells_drawn_at_random_equal_the_explorers_export(full_db, catalog, pct):
    link = parse_link(f"/overview?pct={pct}&at=20,50,100,200,387,1000")
    doc = json.loads(render.render_link(link, "json", full_db, catalog))
    assert doc["rows"], pct
    cells = [(row, h, c) for row in doc["rows"] for h in row["hardware"] for c in h["at"]]
    rng = random.Random(pct)
    for row, h, cell in rng.sample(cells, min(25, len(cells))):
        view = json.loads(render.render_link(parse_link(cell["link"]), "json", full_db, catalog))
        mine = next(x for x in view["hardware"] if x["hardware"] == h["hardware"])
        assert view["target_tok_s_user"] == cell["target"]
        assert view["baseline"] == row["baseline"]
        for k in FIELDS:
            assert cell[k] == mine[k], (row["model"], row["workload"], h["hardware"], k)
        assert h["peak"] == mine["peak"]


def test_rows_are_the_slices_with_two_hardware_and_the_baseline_has_no_score(full_db, catalog):
    doc = overview.make(full_db, ViewState(pct="mean"), catalog)
    for row in doc["rows"]:
        assert len(row["hardware"]) >= 2
        for h in row["hardware"]:
            if h["hardware"] == row["baseline"]:
                assert h["score"] is None and h["score_text"] == "baseline"
            elif h["score"] is not None:
                lo, hi = h["score_range"]["lo"], h["score_range"]["hi"]
                assert lo < hi
                # the geometric mean lies between the least and the most ratio on its range
                assert h["score"] > 0
    assert len({(r["model"], r["workload"]) for r in doc["rows"]}) == len(doc["rows"])


def test_a_stored_overview_is_read_back_and_equals_one_made_now(tmp_path, full_db, catalog):
    from opx.answers import precompute
    import shutil
    db = tmp_path / "opx.duckdb"
    shutil.copy(full_db, db)
    precompute.refresh(db, catalog)
    overview._kept.cache_clear()
    kept = overview.overview(db, ViewState(pct="mean"), catalog)
    assert kept["stored"]
    made = overview.make(db, ViewState(pct="mean"), catalog)
    assert {k: v for k, v in kept.items() if k not in ("stored",)} == made


def test_a_refresh_after_a_write_keeps_unchanged_rows_and_equals_one_made_now(tmp_path, full_db,
                                                                             catalog):
    """The refresh keeps the rows of slices whose runs did not change and makes the others:
    after deleting one hardware's runs of a slice, the stored document is the one made now."""
    from opx import store
    from opx.answers import precompute
    import shutil
    db = tmp_path / "opx.duckdb"
    shutil.copy(full_db, db)
    before = overview.make(db, ViewState(pct="mean"), catalog)
    row = next(r for r in before["rows"] if len(r["hardware"]) > 2)
    gone = row["hardware"][-1]["hardware"]
    with store.writing(db) as con:
        ids = [i for (i,) in con.execute("SELECT id FROM runs WHERE model = ? AND workload = ? "
                                         "AND hardware = ?", [row["model"], row["workload"],
                                                              gone]).fetchall()]
        assert ids and all(store.delete_run(con, i) for i in ids)
    precompute.refresh(db, catalog)
    overview._kept.cache_clear()
    kept = overview.overview(db, ViewState(pct="mean"), catalog)
    assert kept["stored"]
    made = overview.make(db, ViewState(pct="mean"), catalog)
    assert {k: v for k, v in kept.items() if k != "stored"} == made
    changed = next(r for r in made["rows"] if (r["model"], r["workload"]) ==
                   (row["model"], row["workload"]))
    assert gone not in [h["hardware"] for h in changed["hardware"]]
    assert [r for r in made["rows"] if r is not changed] == \
        [r for r in before["rows"] if (r["model"], r["workload"]) !=
         (row["model"], row["workload"])]


def test_the_exports_open(full_db, catalog):
    link = parse_link("/overview?pct=mean")
    table = pd.read_csv(io.BytesIO(render.render_link(link, "csv", full_db, catalog)))
    assert {"model", "workload", "hardware", "at_20", "multiple_387", "score"} <= set(table.columns)
    parquet = pd.read_parquet(io.BytesIO(render.render_link(link, "parquet", full_db, catalog)))
    assert len(parquet) == len(table)
    assert render.render_link(link, "png", full_db, catalog)[:8] == b"\x89PNG\r\n\x1a\n"
    assert render.render_link(link, "svg", full_db, catalog).lstrip().startswith(b"<svg")


def test_the_briefs_give_the_scores_the_table_and_the_evidence_of_the_json(full_db, catalog):
    from pypdf import PdfReader
    from opx.publish import brief
    link = parse_link("/overview?pct=mean")
    doc = json.loads(render.render_link(link, "json", full_db, catalog))
    made = brief.build(link, full_db, catalog)
    scores = sorted((h["score"] for row in doc["rows"] for h in row["hardware"]
                     if h["score"] is not None), reverse=True)
    assert [h.number for h in made.headlines] == scores[:3] + scores[3:][-3:][::-1]
    assert made.runs == sum(e["runs"] for e in doc["evidence"]) > 0
    assert len(made.table.rows) == sum(len(row["hardware"]) for row in doc["rows"])
    assert made.table.columns[:2] == ["Slice · hardware", "Score"]
    pdf = render.render_link(link, "brief-pdf", full_db, catalog)
    assert pdf[:5] == b"%PDF-" and len(PdfReader(io.BytesIO(pdf)).pages) == 1
    text = PdfReader(io.BytesIO(pdf)).pages[0].extract_text()
    assert made.headlines[0].value in text and "Provenance and sources" in text
    page = render.render_link(link, "brief-html", full_db, catalog).decode()
    assert page.lower().startswith("<!doctype html>") and "<script" not in page.lower()
    assert all(h.label in page.replace("&amp;", "&") for h in made.headlines[:40])


def test_at_in_the_link_is_parsed_and_bad_values_are_dropped_with_a_notice():
    state, notices = ViewState.from_query({"at": ["50,20", "x", "100"]})
    assert state.at == (20.0, 50.0, 100.0)
    assert any("`x`" in n for n in notices)
    assert ViewState.from_query({})[0].at == (20.0, 50.0, 100.0, 200.0, 387.0)


def test_a_sort_by_an_interactivity_not_read_at_is_dropped_with_a_notice():
    state, notices = ViewState.from_query({"sort": ["75"]})
    assert state.sort == "slice" and any("sort=75" in n for n in notices)
    state, notices = ViewState.from_query({"sort": ["-75"], "at": ["75,150"]})
    assert state.sort == "-75" and not notices
