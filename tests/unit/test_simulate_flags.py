"""The simulator's CLI checks every numeric flag against its documented range before any work,
and prints strict JSON."""
import json

import pytest

from opx import cli
from opx.publish.export import strict_json


@pytest.mark.parametrize("flag, value", [("--hbm-tb-s", "inf"), ("--hbm-tb-s", "1e-300"),
                                         ("--fp4-pflops", "nan"), ("--fp4-pflops", "1e-300"),
                                         ("--mtp-acceptance", "1.5"), ("--prefix-hit-rate", "-0.1"),
                                         ("--mtp-depth", "9")])
def test_a_flag_outside_its_range_is_refused_before_any_work(tmp_path, capsys, flag, value):
    db = tmp_path / "opx.duckdb"
    code = cli.main(["simulate", "--hardware", "gb300-nvl72", "--model", "deepseek-v4.1-flash",
                     "--workload", "agentx", flag, value, "--save", "--format", "json",
                     "--db", str(db)])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith(f"error: {flag}: ") and "is not a number between" in err
    assert not db.exists()


def test_json_is_strict():
    text = strict_json({"a": float("inf"), "b": [float("nan"), 1.5], "c": {"d": -float("inf")}})
    assert json.loads(text, parse_constant=lambda c: pytest.fail(c)) == \
        {"a": None, "b": [None, 1.5], "c": {"d": None}}


def test_the_simulators_json_output_parses_strictly(capsys):
    assert cli.main(["simulate", "--hardware", "b200", "--model", "deepseek-r1", "--workload",
                     "1k1k", "--layout", "TP8", "--format", "json"]) == 0
    json.loads(capsys.readouterr().out, parse_constant=lambda c: pytest.fail(c))
