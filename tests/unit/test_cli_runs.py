"""`python -m opx runs list|show`: formats, filters, the 120-column table and the errors."""
import csv
import io
import json
import re
import shutil
import subprocess
import sys

import pytest

from opx import cli, store

from opx.store import queries
from tests.conftest import ROOT


def run_cli(capsys, *args):
    """The CLI in this process: (exit code, stdout, stderr)."""
    code = cli.main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def stored(db, where="TRUE", params=()):
    with store.reading(db) as con:
        return [r[0] for r in con.execute(f"SELECT id FROM runs WHERE {where} ORDER BY id",
                                          list(params)).fetchall()]


def test_the_issue_command_prints_a_json_list_of_only_gb300_runs(full_db):
    """The done-when command, as a script runs it: stdout is the JSON and nothing else."""
    r = subprocess.run([sys.executable, "-m", "opx", "runs", "list", "--format", "json",
                        "--hardware", "gb300-nvl72", "--db", str(full_db)],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    runs = json.loads(r.stdout)
    assert isinstance(runs, list) and runs
    assert {run["hardware"] for run in runs} == {"gb300-nvl72"}
    assert sorted(run["id"] for run in runs) == stored(full_db, "hardware = ?", ["gb300-nvl72"])
    first = runs[0]
    assert tuple(first) == queries.RUN_LIST_FIELDS
    for key in ("id", "hardware", "model", "workload", "framework", "framework_version",
                "precision", "gpus_total", "provenance", "points", "date", "label", "source"):
        assert key in first
    assert isinstance(first["points"], int) and first["points"] >= 1
    assert all(run["date"] is None or re.fullmatch(r"\d{4}-\d{2}-\d{2}", run["date"])
               for run in runs)
    assert all(isinstance(run["meta"], dict) for run in runs)


def test_other_spellings_resolve_through_the_catalog(capsys, seed_db):
    def ids(*args):
        code, out, err = run_cli(capsys, "runs", "list", "--format", "json", "--db", str(seed_db),
                                 *args)
        assert code == 0, err
        return sorted(run["id"] for run in json.loads(out))
    slug = ids("--hardware", "gb300-nvl72")
    assert ids("--hardware", "gb300") == slug
    assert ids("--hardware", "GB300 NVL72") == slug
    assert ids("--model", "deepseek-ai/DeepSeek-R1") == ids("--model", "deepseek-r1")
    assert ids("--framework", "DYNAMO-TRTLLM") == ids("--framework", "dynamo-trtllm") != []
    assert ids("--provenance", "Measured") == stored(seed_db, "provenance = 'measured'")


def test_filters_combine_and_repeat(capsys, seed_db):
    def runs(*args):
        code, out, err = run_cli(capsys, "runs", "list", "--format", "json", "--db", str(seed_db),
                                 *args)
        assert code == 0, err
        return json.loads(out)
    gb300 = runs("--hardware", "gb300-nvl72")
    vr = runs("--hardware", "vr-nvl72")
    both = runs("--hardware", "gb300-nvl72", "--hardware", "vr-nvl72")
    assert gb300 and vr
    assert sorted(r["id"] for r in both) == sorted(r["id"] for r in gb300 + vr)
    # repeated values of one filter: any of them; different filters: all of them
    mixed = runs("--hardware", "gb300-nvl72", "--hardware", "vr-nvl72", "--provenance", "preview",
                 "--provenance", "derived", "--model", "deepseek-v4.1-flash")
    assert mixed
    assert sorted(r["id"] for r in mixed) == sorted(
        r["id"] for r in both if r["provenance"] in ("preview", "derived")
        and r["model"] == "deepseek-v4.1-flash")
    narrow = runs("--hardware", "gb300-nvl72", "--workload", "8k1k", "--framework",
                  "dynamo-trtllm", "--provenance", "measured")
    assert narrow and all((r["hardware"], r["workload"], r["framework"], r["provenance"])
                          == ("gb300-nvl72", "8k1k", "dynamo-trtllm", "measured") for r in narrow)


def test_csv_has_a_header_and_the_json_fields(capsys, seed_db):
    code, out, _ = run_cli(capsys, "runs", "list", "--format", "csv", "--hardware", "gb300-nvl72",
                           "--db", str(seed_db))
    assert code == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert tuple(rows[0]) == queries.RUN_LIST_FIELDS
    _, js, _ = run_cli(capsys, "runs", "list", "--format", "json", "--hardware", "gb300-nvl72",
                       "--db", str(seed_db))
    runs = json.loads(js)
    assert [r[0] for r in rows[1:]] == [r["id"] for r in runs]
    by_name = [dict(zip(rows[0], r)) for r in rows[1:]]
    assert by_name[0]["gpus_total"] == str(runs[0]["gpus_total"])
    assert by_name[0]["date"] == (runs[0]["date"] or "")


def test_table_fits_120_columns_on_the_default_data(capsys, full_db):
    code, out, _ = run_cli(capsys, "runs", "list", "--db", str(full_db))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["id", "hardware", "model", "workload", "framework", "precision",
                                "GPUs", "provenance", "points", "date"]
    assert len(lines) == len(stored(full_db)) + 1
    assert max(len(line) for line in lines) <= 120
    assert "…" in out            # the longest model names are cut to fit
    ids = {line.split()[0] for line in lines[1:]}
    assert ids == set(stored(full_db))   # ids stay whole, to copy into `runs show`


@pytest.fixture
def odd_db(seed_db, tmp_path):
    """The default data plus a run with a 1 MB label, long notes and a long hardware name."""
    from opx.ingest.builtin import builtin_runs
    path = tmp_path / "odd.duckdb"
    shutil.copy(seed_db, path)
    base = builtin_runs()[0]
    odd = base.model_copy(update={"hardware": "some-very-long-hardware-name-nobody-has-seen",
                                  "label": "L" * 1_000_000, "notes": "line\n" * 1000})
    with store.writing(path) as con:
        store.write_runs(con, [odd])
        run_id = con.execute("SELECT id FROM runs WHERE hardware = ?",
                             [odd.hardware]).fetchone()[0]
    return path, run_id


def test_long_cells_are_cut_in_the_table_and_whole_in_json(capsys, odd_db):
    db, run_id = odd_db
    code, out, _ = run_cli(capsys, "runs", "list", "--db", str(db))
    assert code == 0
    assert max(len(line) for line in out.splitlines()) <= 120
    line = next(line for line in out.splitlines() if line.startswith(run_id))
    assert "some-very-" in line and "…" in line
    code, out, _ = run_cli(capsys, "runs", "show", run_id, "--db", str(db))
    assert code == 0
    assert "LLLL…" in out and len(out) < 10_000
    assert all(len(line) <= 120 for line in out.split("\n\n")[0].splitlines())
    code, out, _ = run_cli(capsys, "runs", "list", "--format", "json", "--hardware",
                           "some-very-long-hardware-name-nobody-has-seen", "--db", str(db))
    (run,) = json.loads(out)
    assert run["label"] == "L" * 1_000_000 and run["notes"] == "line\n" * 1000


@pytest.mark.parametrize("flag, value, kind", [("--hardware", "x", "hardware"),
                                               ("--model", "no-such-model", "model"),
                                               ("--workload", "99k1k", "workload"),
                                               ("--provenance", "guessed", "provenance"),
                                               ("--framework", "nope-llm", "framework")])
def test_an_unknown_filter_value_is_an_error(capsys, seed_db, flag, value, kind):
    code, out, err = run_cli(capsys, "runs", "list", "--format", "json", flag, value,
                             "--db", str(seed_db))
    assert code == 1 and out == ""
    assert err == f"error: {flag}: unknown {kind} '{value}'\n"
    # one bad value among good ones is still an error
    code, _, err = run_cli(capsys, "runs", "list", "--hardware", "gb300-nvl72", "--hardware", "x",
                           "--db", str(seed_db))
    assert code == 1 and err == "error: --hardware: unknown hardware 'x'\n"


def test_a_known_value_without_runs_lists_nothing(capsys, seed_db):
    """mi355x is in the catalog but has no runs: an empty list, not an error."""
    args = ("runs", "list", "--hardware", "mi355x", "--db", str(seed_db))
    assert run_cli(capsys, *args, "--format", "json") == (0, "[]\n", "")
    code, out, _ = run_cli(capsys, *args, "--format", "csv")
    assert code == 0 and out.splitlines() == [",".join(queries.RUN_LIST_FIELDS)]
    assert run_cli(capsys, *args) == (0, "no runs match the filters\n", "")


def gb200_frontier_run(db):
    with store.reading(db) as con:
        return con.execute("SELECT r.id FROM runs r JOIN points p ON p.run_id = r.id "
                           "WHERE r.hardware = 'gb200-nvl72' AND r.workload = '1k1k' "
                           "GROUP BY r.id HAVING count(*) = 4").fetchone()[0]


def test_runs_show_in_each_format(capsys, seed_db):
    run_id = gb200_frontier_run(seed_db)
    code, out, _ = run_cli(capsys, "runs", "show", run_id, "--format", "json", "--db",
                           str(seed_db))
    assert code == 0
    run = json.loads(out)
    assert run["id"] == run_id and run["hardware"] == "gb200-nvl72" and run["gpus_total"] == 72
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", run["date"]) and isinstance(run["meta"], dict)
    assert [tuple(p) for p in run["points"]] == [queries.run_point_columns()] * 4
    assert [p["seq"] for p in run["points"]] == [0, 1, 2, 3]
    assert run["points"][0]["interactivity_p50"] == pytest.approx(43.3)

    code, out, _ = run_cli(capsys, "runs", "show", run_id, "--format", "csv", "--db",
                           str(seed_db))
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and len(rows) == 4
    assert tuple(rows[0]) == queries.run_point_columns()
    assert float(rows[0]["interactivity_p50"]) == pytest.approx(43.3)
    assert rows[0]["interactivity_p99"] == ""

    code, out, _ = run_cli(capsys, "runs", "show", run_id, "--db", str(seed_db))
    fields, points = out.split("\n\n")
    assert code == 0
    assert "hardware: gb200-nvl72" in fields and "points: 4" in fields
    header, *lines = points.splitlines()
    assert header.split()[:2] == ["seq", "concurrency"] and "interactivity_p99" not in header
    assert len(lines) == 4 and lines[0].split()[:3] == ["0", "4301", "43.3"]


@pytest.mark.parametrize("fmt", ["table", "json", "csv"])
def test_a_missing_id_is_an_error(capsys, seed_db, fmt):
    code, out, err = run_cli(capsys, "runs", "show", "nope", "--format", fmt, "--db",
                             str(seed_db))
    assert (code, out, err) == (1, "", "error: nope: no run with this id\n")


def test_csv_listing_keeps_formula_like_text_as_text():
    from opx.publish.runs_output import csv_value
    assert csv_value("=HYPERLINK(\"http://x\")").startswith("'=")
    assert csv_value("-5") == "-5" and csv_value(-5.0) == -5.0 and csv_value("plain") == "plain"
