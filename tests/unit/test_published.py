import pytest

from opx.errors import OpxError
from opx.ingest.published import load_published
from opx.config import PUBLISHED_DIR

HEADER = ("run,point,source_id,date,publisher,title,source_url,model,hardware,framework,precision,"
          "workload,provenance,percentile,interactivity_tok_s_user,throughput_tok_s_gpu,"
          "throughput_kind,concurrency,ttft_p50_s,gpus_total,gpus_prefill,gpus_decode,tp,ep,"
          "disaggregated,mtp,run_label,note\n")


def test_seed_figures_are_stored_as_totals_over_all_gpus(catalog):
    runs = {r.label: r for r in load_published(PUBLISHED_DIR / "points.csv", catalog)}
    vr = next(r for r in runs.values() if r.hardware == "vr-nvl72" and len(r.points) == 2)
    assert vr.provenance == "preview"
    hi = next(p for p in vr.points if p.tpot_p90_s)
    assert 1 / hi.tpot_p90_s == pytest.approx(387)
    assert hi.throughput_total_tok_s / vr.deployment.gpus_total == pytest.approx(1.7e6)
    peak = next(p for p in vr.points if not p.tpot_p90_s)
    assert peak.tpot_p50_s is None and peak.tpot_p99_s is None      # never guessed
    decode = next(r for r in runs.values() if r.workload == "2k2k")
    assert decode.points[0].throughput_output_tok_s / decode.deployment.gpus_total == \
        pytest.approx(5050)


@pytest.mark.parametrize("row, field, problem", [
    ("r,1,s,2026-01-01,P,T,,no-such-model,h200,vllm,,1k1k,measured,p50,10,100,total,,,8,,,,,,,,",
     "line 2: model", "not in the catalog"),
    ("r,1,s,2026-01-01,P,T,,deepseek-r1,h200,vllm,,1k1k,measured,p95,10,100,total,,,8,,,,,,,,",
     "line 2: value", "without a percentile"),
    ("r,1,s,2026-01-01,P,T,,deepseek-r1,h200,vllm,,1k1k,measured,p50,10,-5,total,,,8,,,,,,,,",
     "point 1", "greater than or equal to 0"),
    ("r,1,s,2026-01-01,P,T,,deepseek-r1,h200,vllm,,1k1k,measured,p50,10,100,total,,,0,,,,,,,,",
     "line 2: deployment", "gpus_total"),
    ("r,1,s,2026-01-01,P,T,,deepseek-r1,h200,vllm,,1k1k,rumour,p50,10,100,total,,,8,,,,,,,,",
     "line 2: run", "provenance"),
])
def test_bad_rows_name_the_file_the_field_and_the_problem(tmp_path, catalog, row, field, problem):
    path = tmp_path / "bad.csv"
    path.write_text(HEADER + row + "\n")
    with pytest.raises(OpxError) as err:
        load_published(path, catalog)
    assert err.value.file == str(path)
    assert field in err.value.field
    assert problem in err.value.problem
