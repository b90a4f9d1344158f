"""opx's own CSV: hand-entered rows, bad cells, and the Data page export importing back unchanged."""
import pytest

from opx import store

from opx.store import queries
from opx.store.importer import import_uploads
from opx.ingest.base import FormatError
from opx.ingest.core import IngestOptions
from opx.ingest.opx_csv import COLUMNS, parse, sniff

HEAD = "hardware,model,workload,gpus_total,concurrency,interactivity_p90,tpot_p90_s,tpot_p99_s,throughput_total_per_gpu\n"


def test_interactivity_becomes_tpot_and_per_gpu_stays_per_gpu(tmp_path):
    recs = parse(tmp_path / "a.csv", HEAD + "h200,deepseek-r1,1k1k,8,4,50,,,900\n")
    assert recs[0].point["tpot_p90_s"] == pytest.approx(0.02)
    assert recs[0].point["throughput_total_per_gpu"] == 900
    assert sniff(tmp_path / "a.csv", HEAD)


@pytest.mark.parametrize("row, where, problem", [
    ("h200,deepseek-r1,1k1k,8,4,50,0.03,,900", "line 2: interactivity_p90", "disagrees"),
    ("h200,deepseek-r1,1k1k,8,4,,0.05,0.04,900", "line 2", "out of order"),
    ("h200,deepseek-r1,1k1k,8,4,50,,,NaN", "line 2: throughput_total_per_gpu", "NaN"),
    ("h200,deepseek-r1,1k1k,8,4,50,,,-1", "line 2: throughput_total_per_gpu", "below 0"),
    ("h200,deepseek-r1,1k1k,8,4,fast,,,1", "line 2: interactivity_p90", "expected a number"),
    ("h200,deepseek-r1,1k1k,8,4,0,,,1", "line 2: interactivity_p90", "is 0"),
    ("h200,deepseek-r1,1k1k,8,4,50,,,1,extra", "line 2", "more cells"),
])
def test_bad_rows_are_refused_with_the_line_and_column(tmp_path, row, where, problem):
    with pytest.raises(FormatError) as err:
        parse(tmp_path / "a.csv", HEAD + row + "\n")
    assert err.value.where == where
    assert problem in err.value.problem


def test_unknown_columns_are_refused(tmp_path):
    with pytest.raises(FormatError, match="unknown column"):
        parse(tmp_path / "a.csv", "hardware,model,throughput_total_per_gpu,speed\nh200,x,1,2\n")


def test_the_export_imports_back_to_the_same_runs_and_points(seed_db, catalog, tmp_path):
    with store.reading(seed_db) as con:
        exported = queries.export_points(con)
        before = store.count_runs(con)
    assert list(exported.columns) == list(COLUMNS)
    csv_bytes = exported.to_csv(index=False).encode()
    fresh = tmp_path / "fresh.duckdb"
    results = import_uploads([("export.csv", csv_bytes)], IngestOptions(), fresh, catalog)
    assert results[0].ok, results[0].error
    with store.reading(fresh) as con:
        assert store.count_runs(con) == before
        again = queries.export_points(con)
    assert set(again.id) == set(exported.id)        # same configurations, same run ids
    # and importing the export into the database it came from adds nothing
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(seed_db.read_bytes())
    results = import_uploads([("export.csv", csv_bytes)], IngestOptions(), copy, catalog)
    assert (results[0].runs_added, results[0].points_added) == (0, 0)


def test_an_export_keeps_the_sources_of_its_figures(seed_db, catalog, tmp_path):
    with store.reading(seed_db) as con:
        csv_bytes = queries.export_points(con).to_csv(index=False).encode()
    fresh = tmp_path / "fresh.duckdb"
    import_uploads([("export.csv", csv_bytes)], IngestOptions(), fresh, catalog)
    with store.reading(fresh) as con:
        sources = set(queries.runs_overview(con).source)
    assert any(s.startswith("vLLM (Inferact), 2026-11-12") for s in sources)


def test_a_stray_carriage_return_is_refused_not_a_crash(tmp_path, catalog):
    """Found by tests/unit/ingest/test_mutations.py: the csv module's own error (a line break
    inside an unquoted cell) is a refusal naming the file, like any malformed content."""
    text = ("\rhardware,model,workload,gpus_total,concurrency,interactivity_p50,"
            "throughput_total_per_gpu\nb200,deepseek-r1,1k1k,8,8,100,800\n")
    assert sniff(tmp_path / "x.csv", text)
    [result] = import_uploads([("stray.csv", text.encode())], IngestOptions(),
                              tmp_path / "x.duckdb", catalog)
    assert result.error.startswith("stray.csv: structure: unexpected content for opx-csv (")
    assert not (tmp_path / "x.duckdb").exists()
