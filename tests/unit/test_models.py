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


# -- keys: the fast canonical JSON must be exactly the documented one --------------------------
# Stored run ids and point keys were computed from model_dump(mode="json") + json.dumps; a key
# that drifted would duplicate every run and point on the next re-import.

import datetime as dt  # noqa: E402

from hypothesis import given, settings, strategies as st  # noqa: E402

from models.run import (MAX_CONCURRENCY, MAX_SECONDS, MAX_THROUGHPUT,  # noqa: E402
                        _hash)

# Every value a point may hold, up to its limit (docs/formats/README.md, "Limits").
_rate = st.floats(min_value=1e-300, max_value=MAX_CONCURRENCY)
_seconds = st.floats(min_value=1e-300, max_value=MAX_SECONDS)
_text = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=12)   # what a store keeps as text (models.run.text_problem)


def _documented_point_key(p: Point) -> str:
    values = p.model_dump(mode="json", exclude={"source"})
    return _hash({k: float(f"{v:.10g}") if isinstance(v, float) else v for k, v in values.items()})


def _documented_run_key(r: Run) -> str:
    return _hash(r.model_dump(mode="json", exclude=set(Run.NOT_IDENTITY)))


@settings(max_examples=400, deadline=None)
@given(values=st.fixed_dictionaries({}, optional={
    "concurrency": _rate, "request_rate": _rate, "tpot_p50_s": _seconds,
    "ttft_p90_s": st.floats(min_value=0, max_value=MAX_SECONDS),
    "e2e_mean_s": _seconds, "throughput_total_tok_s": st.floats(min_value=0, max_value=MAX_THROUGHPUT),
    "requests_completed": st.integers(0, 10**12), "requests_failed": st.integers(0, 5),
    "note": _text, "source": _text}))
def test_point_key_is_the_canonical_json_key(values):
    p = Point(**values)
    assert p.point_key() == _documented_point_key(p)


@settings(max_examples=200, deadline=None)
@given(isl=st.none() | st.integers(1, 10**6), phr=st.none() | st.floats(0, 1),
       date=st.none() | st.dates(), meta=st.dictionaries(_text, _text, max_size=3),
       label=_text, tp=st.none() | st.integers(1, 64), mtp=st.none() | st.booleans())
def test_run_key_is_the_canonical_json_key(isl, phr, date, meta, label, tp, mtp):
    run = Run(hardware="h200", model="deepseek-r1", workload="1k1k", isl=isl, prefix_hit_rate=phr,
              deployment=Deployment(tp=tp, gpus_total=8, mtp=mtp), provenance="measured",
              source="s", date=date, meta=meta, label=label, points=(Point(concurrency=1),))
    assert run.run_key() == _documented_run_key(run)


def test_keys_of_known_values_are_unchanged():
    """Pinned: ids already stored in users' databases and in shared links."""
    run = Run(hardware="h200", model="deepseek-r1", workload="1k1k", isl=1024, osl=1024,
              deployment=Deployment(tp=8, gpus_total=8), provenance="measured", source="s",
              date=dt.date(2026, 1, 2), meta={"k": "v"},
              points=(Point(concurrency=8, tpot_p50_s=0.0123, throughput_total_tok_s=12345.678,
                            requests_completed=32, note="é"),))
    assert run.run_key() == "25fdc13fb2415c10"
    assert run.points[0].point_key() == "2d66ad275b8479f2"


def test_a_disaggregated_deployment_without_its_split_reads_disagg():
    from models import Deployment
    assert Deployment(disaggregated=True, gpus_total=72).describe().startswith("disagg")
    assert "?" not in Deployment(disaggregated=True, gpus_total=72).describe()
    assert "disagg 8P+8D" in Deployment(disaggregated=True, gpus_prefill=8, gpus_decode=8,
                                         gpus_total=16).describe()
