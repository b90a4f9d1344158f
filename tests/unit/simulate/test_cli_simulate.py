"""One command line for the simulator: `python -m opx simulate`, and `python -m opx.simulate` as
its alias."""
import json

import pytest

from opx import cli
from opx.simulate import __main__ as alias


def test_maintenance_actions_are_simulate_flags():
    args = cli.build_parser().parse_args(["simulate", "--ablations", "--silicon", "x.csv"])
    assert args.ablations and args.silicon == "x.csv"
    args = cli.build_parser().parse_args(["simulate", "--spread", "--fixtures", "fx"])
    assert args.spread and args.fixtures == "fx"


@pytest.mark.parametrize("argv, want", [
    (["validate"], ["simulate", "--validate"]),
    (["calibrate", "s.csv"], ["simulate", "--calibrate", "--silicon", "s.csv"]),
    (["ablations", "s.csv"], ["simulate", "--ablations", "--silicon", "s.csv"]),
    (["spread", "fixtures"], ["simulate", "--spread", "--fixtures", "fixtures"]),
    ([], None), (["simulate"], None), (["validate", "a", "b"], None),
])
def test_the_module_alias_stands_for_the_simulate_command(argv, want):
    assert alias.cli_args(argv) == want


def test_the_module_alias_runs_the_same_command(tmp_path):
    """`python -m opx.simulate ACTION` runs `python -m opx simulate --ACTION` in its place: the
    same error line and exit code as the command it stands for."""
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[3]
    missing = str(tmp_path / "none.csv")
    run = lambda *argv: subprocess.run([sys.executable, *argv], cwd=root, capture_output=True,
                                       text=True, timeout=120)
    alias_run = run("-m", "opx.simulate", "ablations", missing)
    command = run("-m", "opx", "simulate", "--ablations", "--silicon", missing)
    assert alias_run.returncode == command.returncode == 1
    assert alias_run.stderr == command.stderr and alias_run.stderr.startswith(f"error: {missing}")
    nonsense = run("-m", "opx.simulate", "nonsense")
    assert nonsense.returncode == 2 and "python -m opx simulate --ablations" in nonsense.stderr


@pytest.mark.parametrize("flags", [["--calibrate", "--ablations"], ["--validate", "--spread"],
                                   ["--ablations", "--spread"]])
def test_one_action_at_a_time(flags, capsys):
    assert cli.main(["simulate", *flags]) == 1
    assert "one action at a time" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--validate", "--calibrate", "--ablations"])
def test_missing_calibration_data_is_a_clear_error(flag, tmp_path, capsys):
    assert cli.main(["simulate", flag, "--silicon", str(tmp_path / "none.csv")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {tmp_path / 'none.csv'}: file: ") and "not found" in err
    assert not (tmp_path / "none.csv").exists()


def test_missing_spread_fixtures_is_a_clear_error(tmp_path, capsys):
    assert cli.main(["simulate", "--spread", "--fixtures", str(tmp_path / "none")]) == 1
    assert "fixtures folder not found" in capsys.readouterr().err


def test_a_simulation_without_its_system_says_what_is_missing(capsys):
    assert cli.main(["simulate", "--model", "deepseek-r1"]) == 1
    err = capsys.readouterr().err
    assert "--hardware, --workload" in err and "--ablations" in err


def test_one_layout_as_json(capsys):
    assert cli.main(["simulate", "--hardware", "b200", "--model", "deepseek-r1", "--workload",
                     "1k1k", "--layout", "TEP8", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["layouts"] == ["TEP8"] and doc["engine"] == "opx-sim" and doc["envelope"]
