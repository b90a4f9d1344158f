"""The path from files to stored runs: safety checks, detection, flags, grouping, all-or-nothing."""
import pytest

from opx import store
from opx.errors import OpxError
from opx.store.importer import import_files, import_uploads
from opx.ingest import core
from opx.ingest.core import IngestOptions, parse_file, read_text
from tests.conftest import ROOT

FIX = ROOT / "tests" / "fixtures" / "opx-csv"


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "opx.duckdb"
    with store.writing(path):
        pass
    return path


def counts(db):
    with store.reading(db) as con:
        return store.count_runs(con), store.data_version(con)


@pytest.mark.parametrize("content, field, problem", [
    (b"", "file", "is empty"),
    (b"  \n\t\n", "file", "is empty"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00", "file", "binary"),
    (b'{"a": "caf\xe9"}', "line 1", "not UTF-8"),
])
def test_unsafe_files_are_refused(tmp_path, content, field, problem):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(OpxError) as err:
        read_text(path)
    assert (err.value.file, err.value.field) == (str(path), field)
    assert problem in err.value.problem


def test_oversized_files_are_refused_before_reading(tmp_path, monkeypatch):
    monkeypatch.setattr(core, "MAX_FILE_BYTES", 10)
    path = tmp_path / "big.json"
    path.write_text("{" + " " * 20 + "}")
    with pytest.raises(OpxError, match="over the 10-byte limit"):
        read_text(path)


def test_a_file_that_cannot_be_read_is_refused_by_name(tmp_path, catalog):
    folder = tmp_path / "results.json"          # a folder named like a result file
    folder.mkdir()
    gone = tmp_path / "gone.json"               # listed, then deleted before it was read
    for path, problem in ((folder, "Is a directory"), (gone, "No such file")):
        result = parse_file(path, IngestOptions(), catalog)
        assert result.error.startswith(f"{path}: file: cannot be read (")
        assert problem in result.error


def test_a_file_is_read_whole_whatever_its_size(tmp_path):
    for size in (1, 4095, 4096, 65_537, 1_000_003):
        path = tmp_path / f"f{size}.json"
        text = '{"a": "' + "x" * (size - 9) + '"}\n'
        path.write_text(text)
        assert read_text(path)[0] == text


def test_unknown_format_lists_the_known_ones(tmp_path, catalog):
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    result = parse_file(path, IngestOptions(), catalog)
    assert not result.ok
    assert result.error.startswith(f"{path}: format: ")
    for name in core.format_names():
        assert name in result.error


def test_missing_gpu_count_names_the_flag_and_the_metadata_key(catalog):
    result = parse_file(FIX / "no-gpus.csv", IngestOptions(), catalog)
    assert "gpus: " in result.error and "--gpus" in result.error and "--meta gpus=" in result.error
    fixed = parse_file(FIX / "no-gpus.csv", IngestOptions(gpus=8), catalog)
    assert fixed.ok and fixed.runs[0].deployment.gpus_total == 8


def test_flags_override_the_file_and_spellings_map_to_slugs(catalog):
    r = parse_file(FIX / "h200-sweep-part1.csv", IngestOptions(), catalog)
    run = r.runs[0]
    assert (run.hardware, run.model, run.workload) == ("h200", "deepseek-r1", "1k1k")
    r = parse_file(FIX / "h200-sweep-part1.csv",
                   IngestOptions(hardware="gb300", gpus=4, meta={"image": "vllm:0.11"}), catalog)
    run = r.runs[0]
    assert run.hardware == "gb300-nvl72" and run.deployment.gpus_total == 4
    assert run.meta == {"image": "vllm:0.11"}
    # per-GPU figures were multiplied back by the GPU count the user gave
    assert run.points[0].throughput_total_tok_s == pytest.approx(900 * 4)


def test_unknown_names_become_slugs_with_a_notice_and_isl_osl_name_the_workload(catalog):
    r = parse_file(FIX / "unknown-names.csv", IngestOptions(), catalog)
    run = r.runs[0]
    assert (run.hardware, run.model, run.workload) == ("rtx-6000-pro", "qwen3-32b", "1000-500")
    assert any("rtx-6000-pro" in n for n in r.notices)


def test_a_sweep_split_over_files_joins_one_run_and_reimport_changes_nothing(db, catalog):
    first = import_files([FIX / "h200-sweep-part1.csv", FIX / "h200-sweep-part2.csv"],
                         IngestOptions(), db, catalog)
    assert [(r.runs_added, r.points_added) for r in first] == [(1, 2), (0, 2)]
    (runs, points), version = counts(db)
    assert (runs, points) == (1, 4)
    again = import_files([FIX / "h200-sweep-part1.csv", FIX / "h200-sweep-part2.csv",
                          FIX / "unknown-names.csv"], IngestOptions(), db, catalog)
    assert [r.points_added for r in again] == [0, 0, 1]          # only unknown-names.csv is new
    assert counts(db)[0][1] == 5


def test_a_bad_file_never_stops_the_good_ones_and_leaves_nothing(db, catalog, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text((FIX / "h200-sweep-part2.csv").read_text().replace("4000", "-4000"))
    results = import_files([FIX / "h200-sweep-part1.csv", bad], IngestOptions(), db, catalog)
    assert results[0].ok and not results[1].ok
    assert "line 2: throughput_total_per_gpu" in results[1].error and "below 0" in results[1].error
    assert counts(db)[0] == (1, 2)


def test_dry_run_writes_nothing(db, catalog):
    before = counts(db)
    results = import_files([FIX / "h200-sweep-part1.csv"], IngestOptions(), db, catalog,
                           dry_run=True)
    assert results[0].points_added == 2
    assert counts(db) == before


def test_uploads_use_their_own_names_in_errors(db, catalog):
    results = import_uploads([("mine.json", b"[1, 2, 3]")], IngestOptions(), db, catalog)
    assert results[0].error.startswith("mine.json: ")


def test_missing_paths_are_reported(db, catalog, tmp_path):
    results = import_files([tmp_path / "nope"], IngestOptions(), db, catalog)
    assert results[0].error.endswith("no such file or folder")


def test_a_file_with_a_bad_point_and_a_bad_date_reports_the_point(tmp_path, catalog):
    """The points are checked before the date, whatever else is wrong."""
    path = tmp_path / "d.csv"
    path.write_text("hardware,model,workload,gpus_total,date,concurrency,interactivity_p50,"
                    "throughput_total_per_gpu\nb200,deepseek-r1,1k1k,8,notadate,0,100,800\n")
    result = parse_file(path, IngestOptions(), catalog)
    assert result.error == f"{path}: line 2: concurrency: Input should be greater than 0 (got 0.0)"


def test_an_integer_too_long_for_python_is_still_reported_by_its_format(tmp_path, catalog):
    path = tmp_path / "ix.json"
    path.write_text('{"hw": "h100", "tput_per_gpu": 1, "a": ' + "1" * 5000 + "}")
    result = parse_file(path, IngestOptions(), catalog)
    assert result.format == "inferencex"
    assert result.error.startswith(f"{path}: structure: unexpected content for inferencex")


VLLM_RESULT = (ROOT / "tests" / "fixtures" / "vllm" / "metadata.json").read_text()
DURATION = VLLM_RESULT.index('"duration": 40.0')
COMPLETED = VLLM_RESULT.index('"completed"')


@pytest.mark.parametrize("cut, problem", [
    # A vLLM result cut in the middle of a number, and in the middle of a key.
    (DURATION + len('"duration": 4'), "truncated JSON: the file ends before the JSON is complete "
                                      "(Expecting ',' delimiter)"),
    (COMPLETED + 4, "truncated JSON: the file ends inside a string that opens at line 1 column "
                    f"{COMPLETED + 1}"),
])
def test_a_truncated_json_file_says_where_it_ends(tmp_path, catalog, db, cut, problem):
    path = tmp_path / "cut.json"
    path.write_text(VLLM_RESULT[:cut])
    result = parse_file(path, IngestOptions(), catalog)
    # `line 1 column N`: just after the last character, where the JSON was cut.
    assert result.error == f"{path}: line 1 column {cut + 1}: {problem}"
    before = counts(db)
    (imported,) = import_files([path], IngestOptions(), db, catalog)
    assert imported.error == result.error
    assert counts(db) == before                          # a refused file writes nothing


def test_invalid_json_and_a_cut_jsonl_line_are_named(tmp_path, catalog):
    bad = tmp_path / "bad.json"
    bad.write_text('{"completed": 3} trailing')
    assert parse_file(bad, IngestOptions(), catalog).error == (
        f"{bad}: line 1 column 18: invalid JSON (Expecting value)")
    cut = tmp_path / "cut.jsonl"
    cut.write_text('{"a": 1}\n{"b": [1, 2,\n')
    assert parse_file(cut, IngestOptions(), catalog).error.startswith(
        f"{cut}: line 2 column 13: truncated JSON")


def test_valid_json_of_no_known_shape_is_still_an_unknown_format(tmp_path, catalog):
    path = tmp_path / "other.json"
    path.write_text('{"hello": "world"}')
    assert parse_file(path, IngestOptions(), catalog).error.startswith(f"{path}: format: ")


# -- workload and ISL/OSL: measured means that vary from point to point --------------------------

def _vllm_sweep(tmp_path, lengths, random_lengths=None):
    """One vLLM result file per (max_concurrency, measured mean ISL, OSL)."""
    import json
    base = json.loads(VLLM_RESULT)
    del base["workload"]                               # the file does not name one
    paths = []
    for concurrency, isl, osl in lengths:
        result = dict(base, max_concurrency=concurrency, total_input_tokens=isl * 320,
                      total_output_tokens=osl * 320)
        if random_lengths:
            result.update(random_input_len=str(random_lengths[0]),
                          random_output_len=str(random_lengths[1]))
        paths.append(tmp_path / f"c{concurrency}.json")
        paths[-1].write_text(json.dumps(result))
    return paths


def test_vllm_files_with_measured_means_near_a_catalog_workload_join_one_run(tmp_path, db, catalog):
    # --random-range-ratio 0.1 around 1024/1024: each file's means differ by about 1%.
    paths = _vllm_sweep(tmp_path, [(8, 1010, 1021), (16, 1031, 1017), (32, 1019, 1009)])
    results = import_files(paths, IngestOptions(), db, catalog)
    assert [(r.runs_added, r.points_added) for r in results] == [(1, 1), (0, 1), (0, 1)]
    run = parse_file(paths[0], IngestOptions(), catalog).runs[0]
    assert (run.workload, run.isl, run.osl) == ("1k1k", 1024, 1024)
    assert run.points[0].note == "measured mean ISL 1010, OSL 1021"
    assert any("from ISL/OSL 1024/1024 (the catalog workload's, within 3% of the measured means)"
               in n for n in parse_file(paths[0], IngestOptions(), catalog).notices)
    assert counts(db)[0] == (1, 3)


def test_points_of_one_file_near_each_other_join_one_run_named_by_their_mean(tmp_path, catalog):
    # An --append-result file of one configuration at about 1023/77 (not in the catalog), and a
    # 2048/77 result: two workloads.
    import json
    lines = []
    for concurrency, isl, osl in ((8, 1019, 77), (16, 1027, 77), (32, 2048, 77)):
        result = dict(json.loads(VLLM_RESULT), max_concurrency=concurrency,
                      total_input_tokens=isl * 320, total_output_tokens=osl * 320)
        del result["workload"]
        lines.append(json.dumps(result))
    path = tmp_path / "append.json"
    path.write_text("\n".join(lines) + "\n")
    result = parse_file(path, IngestOptions(), catalog)
    near, far = result.runs
    assert (near.workload, near.isl, near.osl, len(near.points)) == ("1023-77", 1023, 77, 2)
    assert [p.note for p in near.points] == ["measured mean ISL 1019, OSL 77",
                                             "measured mean ISL 1027, OSL 77"]
    assert (far.workload, len(far.points)) == ("2k-77", 1)


def test_configured_lengths_in_vllm_metadata_name_the_workload(tmp_path, catalog):
    paths = _vllm_sweep(tmp_path, [(8, 700, 130)], random_lengths=(1024, 128))
    run = parse_file(paths[0], IngestOptions(), catalog).runs[0]
    assert (run.workload, run.isl, run.osl) == ("1k-128", 1024, 128)


def test_workload_flag_joins_points_whatever_their_measured_means(tmp_path, catalog):
    paths = _vllm_sweep(tmp_path, [(8, 600, 100), (16, 900, 200)])
    runs = [parse_file(p, IngestOptions(workload="1k1k"), catalog).runs[0] for p in paths]
    assert {r.run_key() for r in runs} == {runs[0].run_key()}          # one configuration
    assert (runs[0].workload, runs[0].isl, runs[0].osl) == ("1k1k", 1024, 1024)
    runs = [parse_file(p, IngestOptions(workload="my-chat"), catalog) for p in paths]
    assert {r.runs[0].run_key() for r in runs} == {runs[0].runs[0].run_key()}
    assert (runs[0].runs[0].isl, runs[0].runs[0].osl) == (None, None)  # not in the catalog
    assert any("ISL/OSL not set" in n for n in runs[0].notices)


def test_genai_perf_files_of_one_synthetic_configuration_join_one_run(tmp_path, catalog):
    import json
    fixture = ROOT / "tests" / "fixtures" / "genai-perf" / "flat_config_genai_perf.json"
    keys = []
    for rate, isl, osl in ((2.0, 1019.4, 126.2), (4.0, 1030.8, 127.9)):
        data = json.loads(fixture.read_text())
        data["input_config"].update(request_rate=rate, synthetic_input_tokens_stddev=50,
                                    output_tokens_stddev=0)
        data["input_sequence_length"]["avg"] = isl
        data["output_sequence_length"]["avg"] = osl
        path = tmp_path / f"r{rate:g}_genai_perf.json"
        path.write_text(json.dumps(data))
        result = parse_file(path, IngestOptions(hardware="h100", gpus=1), catalog)
        (run,) = result.runs
        assert (run.workload, run.isl, run.osl) == ("1k-128", 1024, 128)
        keys.append(run.run_key())
    assert keys[0] == keys[1]
    assert any("vary with --synthetic-input-tokens-stddev 50" in n for n in result.notices)
