"""Repeat sets (docs/metrics.md, "Repeated runs"): the same benchmark imported as three runs on
three days, its throughput x0.9, x1.0 and x1.1, gives the middle run's figure with the spread of
the three, on every page's JSON, through the CLI as a user runs it."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from opx import store
from opx.store import envelopes

ROOT = Path(__file__).resolve().parents[2]
VLLM = ROOT / "tests/fixtures/vllm/metadata.json"
SCALES = {"20260401-120000": 0.9, "20260402-120000": 1.0, "20260403-120000": 1.1}
THROUGHPUTS = ("request_throughput", "output_throughput", "total_token_throughput")


def opx(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "opx", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def export_json(db: Path, link: str, tmp_path: Path) -> dict:
    out = tmp_path / "view.json"
    done = opx("export", link, "--db", str(db), "--format", "json", "-o", str(out))
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def _three_days(tmp_path: Path) -> list[Path]:
    result = json.loads(VLLM.read_text())
    files = []
    for day, scale in SCALES.items():
        copy = dict(result, date=day, **{k: result[k] * scale for k in THROUGHPUTS})
        path = tmp_path / f"run-{day[:8]}.json"
        path.write_text(json.dumps(copy))
        files.append(path)
    return files


@pytest.fixture
def repeated(tmp_path) -> Path:
    db = tmp_path / "opx.duckdb"
    done = opx("ingest", *map(str, _three_days(tmp_path)), "--db", str(db))
    assert done.returncode == 0, done.stderr
    return db


TPOT_P50_S = 0.0079          # the file's median TPOT: its P50 interactivity is 1 / 0.0079
PER_GPU = 16384.0 / 8        # its total throughput over TP 4 x DP 2 = 8 GPUs


@pytest.mark.parametrize("target", [1 / TPOT_P50_S, 60.0])     # the point, and below it
def test_the_figure_is_the_middle_runs_with_the_spread_of_the_three(repeated, tmp_path, target):
    view = export_json(repeated, f"/?model=deepseek-r1&workload=1k1k&hw=gb300-nvl72&pct=p50"
                                 f"&target={target}", tmp_path)
    hw = view["hardware"][0]
    assert hw["at_target_how"] in ("point", "at_least")
    assert hw["at_target"] == pytest.approx(PER_GPU)
    assert hw["at_target_spread"] == {"lo": pytest.approx(0.9 * PER_GPU),
                                      "hi": pytest.approx(1.1 * PER_GPU), "runs": 3}
    # the middle run is the configuration named
    with store.reading(repeated) as con:
        middle = con.execute("SELECT id FROM runs WHERE date = DATE '2026-04-02'").fetchone()[0]
    assert [c["run_id"] for c in hw["configurations"]] == [middle]


def test_one_run_has_no_spread_and_says_one_run(tmp_path):
    db = tmp_path / "opx.duckdb"
    assert opx("ingest", str(VLLM), "--db", str(db)).returncode == 0
    view = export_json(db, "/?model=deepseek-r1&workload=1k1k&hw=gb300-nvl72&pct=p50&target=60",
                       tmp_path)
    assert view["hardware"][0]["at_target_spread"] is None
    csv = tmp_path / "view.csv"
    assert opx("export", "/?model=deepseek-r1&workload=1k1k&hw=gb300-nvl72&pct=p50&target=60",
               "--db", str(db), "--format", "brief-html", "-o", str(csv)).returncode == 0
    assert "one run" in csv.read_text()


def _sweep(tmp_path: Path) -> list[Path]:
    """A four-point sweep in opx's own CSV, run on three days, throughput scaled."""
    rows = [(4, 0.0111, 900), (16, 0.0150, 2100), (64, 0.0300, 4000), (128, 0.0480, 5200)]
    files = []
    for day, scale in (("2026-05-01", 0.9), ("2026-05-02", 1.0), ("2026-05-03", 1.1)):
        lines = ["hardware,model,workload,framework,precision,gpus_total,tp,provenance,date,"
                 "concurrency,tpot_p50_s,throughput_total_per_gpu"]
        lines += [f"h200,deepseek-r1,1k1k,vllm,fp8,8,8,measured,{day},{c},{t},{y * scale}"
                  for c, t, y in rows]
        path = tmp_path / f"sweep-{day}.csv"
        path.write_text("\n".join(lines) + "\n")
        files.append(path)
    return files


def test_an_interpolated_figure_is_the_middle_runs_and_its_multiple_gives_its_range(tmp_path):
    db = tmp_path / "opx.duckdb"
    files = _sweep(tmp_path)
    assert opx("ingest", *map(str, files), "--db", str(db)).returncode == 0
    single = tmp_path / "one.duckdb"
    assert opx("ingest", str(files[1]), "--db", str(single)).returncode == 0
    link = "/?model=deepseek-r1&workload=1k1k&hw=h200&pct=p50&target=50"
    middle = export_json(single, link, tmp_path)["hardware"][0]
    three = export_json(db, link, tmp_path)["hardware"][0]
    assert three["at_target_how"] == "interpolated"
    assert three["at_target"] == pytest.approx(middle["at_target"])
    assert three["at_target_spread"]["lo"] == pytest.approx(0.9 * middle["at_target"])
    assert three["at_target_spread"]["hi"] == pytest.approx(1.1 * middle["at_target"])
    assert middle["at_target_spread"] is None

    # against a baseline of one run, the multiple's range is each end over the baseline
    assert opx("ingest", str(VLLM), "--db", str(db), "--hardware", "h100", "--model",
               "deepseek-r1", "--workload", "1k1k").returncode == 0
    cmp = export_json(db, "/compare?model=deepseek-r1&workload=1k1k&a=h200&b=h100&pct=p50"
                          "&target=50", tmp_path)
    m = cmp["multiple_at_target"]
    lo, hi = cmp["multiple_at_target_range"]["lo"], cmp["multiple_at_target_range"]["hi"]
    assert lo == pytest.approx(m * 0.9) and hi == pytest.approx(m * 1.1)
    assert "over the repeated runs" in cmp["multiple_at_target_text"]


def test_deleting_a_run_of_a_repeat_set_keeps_the_stored_envelope_right(repeated):
    with store.writing(repeated) as con:
        first = con.execute("SELECT id FROM runs WHERE date = DATE '2026-04-01'").fetchone()[0]
        assert store.delete_run(con, first)
        kept = con.execute("SELECT * FROM envelope_points ORDER BY ALL").fetchall()
        envelopes.rebuild_all(con)
        assert con.execute("SELECT * FROM envelope_points ORDER BY ALL").fetchall() == kept


def test_the_spread_is_stored_when_the_data_changes_and_read_back(repeated, tmp_path):
    """The Simulate page's floor is made on import, not when someone looks; a new import makes
    a new one (its key names the data's version)."""
    from opx.store import repeats, stored_documents
    with store.reading(repeated) as con:
        key = repeats.spread_key(store.data_version(con))
        assert key in stored_documents.keys(con)
        assert repeats.stored_spread(con, store.data_version(con)) == repeats.spread_summary(con)
    extra = tmp_path / "run-20260404.json"
    extra.write_text(json.dumps(json.loads(VLLM.read_text()) | {"date": "20260404-120000",
                                                                "mean_tpot_ms": 9.0}))
    done = opx("ingest", str(extra), "--db", str(repeated))
    assert done.returncode == 0, done.stderr
    with store.reading(repeated) as con:
        assert repeats.spread_key(store.data_version(con)) != key
        assert repeats.spread_key(store.data_version(con)) in stored_documents.keys(con)
        assert repeats.stored_spread(con, store.data_version(con)) == repeats.spread_summary(con)
