"""Hostile values in every import format, through the real `python -m opx ingest` entry against a
real DuckDB file: a GPU count past DuckDB's INTEGER, a 400-digit integer, 1e20, JSON nested past
Python's recursion limit, a lone surrogate, an oversized text field. Each file is refused as
`error: <file>: <field>: <what>`, a good file in the same call is imported, the summary prints,
`--dry-run` refuses exactly the same files and what was stored stays as it was
(docs/formats/README.md, "Limits")."""
import csv
import re

import pytest

from models import Deployment, Point, Run
MAX_GPUS, MAX_NAME_CHARS, MAX_NOTE_CHARS, MAX_TOKENS = 1_000_000, 256, 4000, 10**8
from opx import cli, store
from opx.errors import OpxError
from opx.ingest.published import load_published
from tests.conftest import ROOT

FIX = ROOT / "tests" / "fixtures"
HUGE = {"3e9": "3000000000", "400 digits": "1" + "0" * 399, "1e20": "1e20"}
LONG_TEXT = "A" * 1_000_000
DEEP = "[" * 5000 + "]" * 5000

# Per format: a good sample, the flags it needs, a text fact as the file writes it (quoted for
# JSON) and the field it fills, and an integer fact with `{n}` where the hostile number goes and
# the names an error may give its field (the file's key, or the run's field it fills).
FORMATS = {
    "vllm": ("vllm/metadata.json", ["--gpus", "8"], '"dsr1-fp4"', "label", '"tp": "4"',
             '"tp": "{n}"', "tp"),
    "sglang": ("sglang/short_dec2024.jsonl", ["--hardware", "h200", "--model", "deepseek-r1",
                                              "--gpus", "8"],
               '"random"', "dataset_name", '"random_input_len": 1024', '"random_input_len": {n}',
               "random_input_len|isl"),
    "genai-perf": ("genai-perf/flat_config_genai_perf.json", ["--hardware", "h100", "--gpus", "8"],
                   '"meta-llama/Meta-Llama-3-8B-Instruct"', "model",
                   '"synthetic_input_tokens_mean": 1024', '"synthetic_input_tokens_mean": {n}',
                   "synthetic_input_tokens_mean|isl"),
    "llmperf": ("llmperf/mistral-7b_100_50_summary.json", ["--hardware", "h100", "--gpus", "8"],
                '"mistralai/Mistral-7B-Instruct-v0.2"', "model", '"mean_input_tokens": 100',
                '"mean_input_tokens": {n}', "mean_input_tokens|isl"),
    "trtllm-bench": ("trtllm-bench/report_streaming.json", ["--hardware", "h200", "--gpus", "8"],
                     '"deepseek-ai/DeepSeek-R1"', "model", '"tp_size": 8', '"tp_size": {n}',
                     "tp_size|tp"),
    "inferencex": ("inferencex/agg_legacy_2025_h200.json", ["--workload", "1k1k"],
                   '"deepseek-ai/DeepSeek-R1-0528"', "model", '"tp": 8', '"tp": {n}',
                   "tp|gpus_total"),
    "aiperf": ("aiperf/rate_mode/profile_export_aiperf.json", ["--hardware", "h100", "--gpus", "8"],
               '"Qwen/Qwen3-8B"', "model", '"request_rate": 12.5', '"request_rate": {n}',
               "request_rate"),
    "aiconfigurator": ("aiconfigurator/agg_pareto_prefix_cp.csv", [], "Qwen/Qwen3-235B-A22B-FP8",
                       "model", ",1024,1024,512,", ",{n},1024,512,", "isl"),
    "opx-csv": ("opx-csv/h200-sweep-part2.csv", [], ",vllm,", "framework", ",8,8,measured,",
                ",{n},8,measured,", "gpus_total"),
}


def _hostile_files(folder, fmt):
    """The format's sample with each hostile value in place: {file: field the error names}."""
    sample, _, text_at, text_field, number_at, number_as, number_field = FORMATS[fmt]
    path = FIX / sample
    original = path.read_text()
    assert text_at in original and number_at in original, fmt
    is_json = path.suffix in (".json", ".jsonl")
    files = {}

    def write(name, text, field, data=None):
        f = folder / f"{fmt}-{name}{path.suffix}"
        f.write_bytes(data if data is not None else text.encode())
        files[f] = field
    for name, n in HUGE.items():
        write(name.replace(" ", "-"), original.replace(number_at, number_as.format(n=n)),
              number_field)
    long_text = f'"{LONG_TEXT}"' if is_json else f",{LONG_TEXT}," if text_at[0] == "," \
        else LONG_TEXT
    write("long-text", original.replace(text_at, long_text), text_field)
    if is_json:
        write("surrogate", original.replace(text_at, text_at[:-1] + '\\ud800"'), text_field)
        write("deep", original.replace(text_at, DEEP), "json")
    else:       # a CSV cannot hold a surrogate; its nearest: a byte that is not UTF-8
        write("not-utf8", "", r"line \d+", original.replace(text_at, text_at + "\udcff", 1)
              .encode("utf-8", "surrogateescape"))
    return files


def _run_ids(db):
    with store.reading(db) as con:
        return dict(con.execute("SELECT id, source FROM runs").fetchall())


def _ingest(capsys, *args):
    code = cli.main(["ingest", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def _errors(err):
    """The `error:` lines of a refused import, by the file they name."""
    return {line.split(": ", 2)[1]: line for line in err.splitlines() if line.startswith("error: ")}


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_hostile_values_are_refused_by_field_and_the_good_file_still_imports(
        fmt, seed_db, tmp_path, capsys):
    db = tmp_path / "opx.duckdb"
    db.write_bytes(seed_db.read_bytes())
    before = _run_ids(db)
    folder = tmp_path / "in"
    folder.mkdir()
    hostile = _hostile_files(folder, fmt)
    sample = FIX / FORMATS[fmt][0]
    good = folder / f"{fmt}-good{sample.suffix}"
    good.write_bytes(sample.read_bytes())
    args = [*hostile, good, *FORMATS[fmt][1], "--db", db]

    dry_code, dry_out, dry_err = _ingest(capsys, *args, "--dry-run")
    code, out, err = _ingest(capsys, *args)

    assert code == dry_code == 1
    assert "Traceback" not in err + dry_err
    refused = _errors(err)
    assert refused == _errors(dry_err)              # the dry run refuses exactly these files
    assert set(refused) == {str(f) for f in hostile}
    for f, field in hostile.items():
        line = refused[str(f)]
        # the field is one of the line's `: `-separated parts, maybe a dotted path
        assert re.match(rf"error: {re.escape(str(f))}: (?:[^:]*: )*?(?:[\w.]*\.)?(?:{field}): ",
                        line), line
        assert len(line) < 400, line                 # the value is named, not copied
    assert f"1 file(s) imported, {len(hostile)} refused" in out
    assert f"1 file(s) imported (dry run: nothing written), {len(hostile)} refused" in dry_out
    after = _run_ids(db)
    assert {k: v for k, v in after.items() if k in before} == before
    assert after.keys() > before.keys()
    assert all(good.name in after[k] for k in after.keys() - before.keys())


def test_a_bad_file_between_good_ones_in_one_call(seed_db, tmp_path, capsys):
    """One call, a folder: the poison file in the middle; those after it still import."""
    db = tmp_path / "opx.duckdb"
    db.write_bytes(seed_db.read_bytes())
    folder = tmp_path / "in"
    folder.mkdir()
    part1, part2 = FIX / "opx-csv" / "h200-sweep-part1.csv", FIX / "opx-csv" / "h200-sweep-part2.csv"
    (folder / "a.csv").write_bytes(part1.read_bytes())
    (folder / "b.csv").write_text(part2.read_text().replace(",8,8,measured,",
                                                            ",3000000000,8,measured,"))
    (folder / "c.csv").write_bytes(part2.read_bytes())
    code, out, err = _ingest(capsys, folder, "--db", db)
    assert code == 1
    assert err == (f"error: {folder / 'b.csv'}: deployment: gpus_total: Input should be less "
                   f"than or equal to {MAX_GPUS} (got 3000000000)\n")
    assert "2 file(s) imported, 1 refused" in out


def test_a_30_mb_label_is_refused_naming_file_and_field(seed_db, tmp_path, capsys):
    db = tmp_path / "opx.duckdb"
    db.write_bytes(seed_db.read_bytes())
    label = "A" * (30 * 1024 * 1024)
    csv_file = tmp_path / "label.csv"
    csv_file.write_text("hardware,model,workload,gpus_total,concurrency,interactivity_p90,"
                        f"throughput_total_per_gpu,label\nh200,deepseek-r1,1k1k,8,4,80,900,{label}\n")
    json_file = tmp_path / "label.json"
    json_file.write_text((FIX / "vllm" / "metadata.json").read_text()
                         .replace('"dsr1-fp4"', f'"{label}"'))
    before = _run_ids(db)
    code, out, err = _ingest(capsys, csv_file, json_file, "--db", db)
    assert code == 1
    limit = f"is 31,457,280 characters long, over the limit of {MAX_NAME_CHARS}"
    assert err.splitlines() == [f"error: {csv_file}: line 2: label: {limit}",
                                f"error: {json_file}: label: {limit}"]
    assert _run_ids(db) == before


def test_notes_and_metadata_have_limits_too(seed_db, tmp_path, capsys):
    db = tmp_path / "opx.duckdb"
    db.write_bytes(seed_db.read_bytes())
    head = "hardware,model,workload,gpus_total,concurrency,interactivity_p90,notes,meta,note\n"
    files = {"notes": f'h200,deepseek-r1,1k1k,8,4,80,{"n" * (MAX_NOTE_CHARS + 1)},,\n',
             "meta.k": 'h200,deepseek-r1,1k1k,8,4,80,,"{""k"": ""' + "v" * 30_000 + '""}",\n',
             "meta": 'h200,deepseek-r1,1k1k,8,4,80,,"{' + ",".join(
                 f'""k{i}"": ""v""' for i in range(101)) + '}",\n',
             "note": f'h200,deepseek-r1,1k1k,8,4,80,,,{"p" * (MAX_NOTE_CHARS + 1)}\n'}
    paths = []
    for field, row in files.items():
        paths.append(tmp_path / f"{field}.csv")
        paths[-1].write_text(head + row)
    code, out, err = _ingest(capsys, *paths, "--format", "opx-csv", "--db", db)
    assert code == 1
    lines = err.splitlines()
    assert len(lines) == 4
    for path, field, line in zip(paths, files, lines):
        assert line.startswith(f"error: {path}: line 2: {field}: "), line
        assert "over the limit of" in line, line


def test_the_limits_are_the_model_s():
    """The bounds live in models/run.py and hold for every way a run is made."""
    base = dict(hardware="h200", model="deepseek-r1", workload="1k1k", provenance="measured",
                source="s", points=(Point(concurrency=1),))
    with pytest.raises(ValueError, match="less than or equal to"):
        Deployment(gpus_total=MAX_GPUS + 1)
    with pytest.raises(ValueError, match="less than or equal to"):
        Run(**base, isl=MAX_TOKENS + 1, deployment=Deployment(gpus_total=8))
    with pytest.raises(ValueError, match="lone surrogate"):
        Run(**base, label="a\ud800", deployment=Deployment(gpus_total=8))
    with pytest.raises(ValueError, match="over the limit"):
        Point(note="x" * (MAX_NOTE_CHARS + 1))
    with pytest.raises(ValueError, match="less than or equal to"):
        Point(requests_completed=10**400)
    Deployment(gpus_total=MAX_GPUS)     # the limit itself is allowed


def test_published_figures_out_of_range_are_refused_by_line(tmp_path, catalog):
    with (ROOT / "data" / "published" / "points.csv").open(newline="") as f:
        header, first = list(csv.reader(f))[:2]
    for value in ("3000000000", "1" + "0" * 399, "1e400"):
        path = tmp_path / "points.csv"
        with path.open("w", newline="") as f:
            csv.writer(f).writerows([header, [value if column == "gpus_total" else cell
                                              for column, cell in zip(header, first)]])
        with pytest.raises(OpxError) as err:
            load_published(path, catalog)
        assert str(err.value).startswith(f"{path}: line 2: deployment: "), err.value


def test_a_limit_holds_at_exactly_its_value_and_counts_only_what_the_file_gave(
        seed_db, tmp_path, capsys):
    """A source of exactly 2,000 characters imports (its points' source, which also names the
    file, is longer, and that part is opx's); 2,001 is refused, naming the field."""
    from models.run import MAX_SOURCE_CHARS
    db = tmp_path / "opx.duckdb"
    db.write_bytes(seed_db.read_bytes())
    head = ("hardware,model,workload,gpus_total,concurrency,interactivity_p90,"
            "throughput_total_per_gpu,source\n")
    ok, long = tmp_path / "ok.csv", tmp_path / "long.csv"
    ok.write_text(head + f"h200,deepseek-r1,1k1k,8,4,80,900,{'s' * MAX_SOURCE_CHARS}\n")
    long.write_text(head + f"h200,deepseek-r1,1k1k,8,4,81,901,{'s' * (MAX_SOURCE_CHARS + 1)}\n")
    code, out, err = _ingest(capsys, ok, long, "--db", db)
    assert code == 1 and "1 file(s) imported, 1 refused" in out
    assert err == (f"error: {long}: line 2: source: is 2,001 characters long, over the limit of "
                   "2,000\n")


@pytest.mark.parametrize("name, text", [
    ("opx.csv", "hardware,model,workload,gpus_total,concurrency,interactivity_p90,"
                "throughput_total_per_gpu,throughput_total_per_gpu\n"
                "h200,deepseek-r1,1k1k,8,4,80,900,100\n"),
    ("silicon.csv", None)])
def test_a_csv_that_names_a_column_twice_is_refused(seed_db, tmp_path, capsys, name, text):
    db = tmp_path / "opx.duckdb"
    db.write_bytes(seed_db.read_bytes())
    path = tmp_path / name
    if text is None:             # AIConfigurator's silicon CSV with its first column repeated
        lines = (FIX / "aiconfigurator" / "silicon_quirks.csv").read_text().splitlines()
        first = lines[0].split(",")[0]
        text = "\n".join([lines[0] + f",{first}"] + [row + ",x" for row in lines[1:] if row]) + "\n"
    path.write_text(text)
    before = _run_ids(db)
    code, out, err = _ingest(capsys, path, "--db", db)
    assert code == 1 and "appears more than once" in err and f"error: {path}: " in err
    assert _run_ids(db) == before
