import pytest
from pydantic import ValidationError

from models import Deployment, Point, Run


def _run(**overrides):
    base = dict(hardware="h200", model="deepseek-r1", workload="1k1k",
                deployment=Deployment(gpus_total=8, tp=8), provenance="measured",
                source="bench.json sha256:abc",
                points=(Point(concurrency=4, tpot_p50_s=0.02, throughput_total_tok_s=1000.0),))
    base.update(overrides)
    return Run(**base)


def test_valid_run_has_a_stable_run_key():
    assert _run().run_key() == _run().run_key()
    assert _run().run_key() != _run(framework="vllm").run_key()


@pytest.mark.parametrize("field, value", [
    ("throughput_total_tok_s", -1.0), ("tpot_p90_s", 0.0), ("concurrency", 0),
    ("requests_failed", -2),
])
def test_point_rejects_impossible_values(field, value):
    with pytest.raises(ValidationError) as err:
        Point(**{field: value})
    assert field in str(err.value)


def test_zero_gpus_are_rejected():
    with pytest.raises(ValidationError, match="gpus_total"):
        Deployment(gpus_total=0)


def test_prefill_and_decode_gpus_must_add_up():
    with pytest.raises(ValidationError, match="must equal gpus_total"):
        Deployment(gpus_total=16, gpus_prefill=8, gpus_decode=4)
    assert Deployment(gpus_total=16, gpus_prefill=8, gpus_decode=8).describe().startswith("disagg")


def test_unknown_provenance_and_fields_are_rejected():
    with pytest.raises(ValidationError, match="provenance"):
        _run(provenance="guessed")
    with pytest.raises(ValidationError):
        Point(tpot_p95_s=0.1)


def test_run_needs_points_and_a_source():
    with pytest.raises(ValidationError):
        _run(points=())
    with pytest.raises(ValidationError):
        _run(source="")
