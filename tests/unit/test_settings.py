"""Boolean settings fail closed: a value opx does not know stops the CLI with a clear line and is
taken as set until it is fixed, so a read-only setting never serves writes."""
import subprocess
import sys

import pytest

from opx import settings
from opx.errors import OpxError
from tests.conftest import ROOT

ERROR = "error: OPX_READ_ONLY: '2' is not one of 1, true, yes, on, 0, false, no, off"


@pytest.mark.parametrize("value, expected", [("1", True), ("TRUE", True), (" yes ", True),
                                             ("On", True), ("", False), ("0", False),
                                             ("false", False), ("No", False), ("off", False)])
def test_known_values(monkeypatch, value, expected):
    monkeypatch.setenv("OPX_READ_ONLY", value)
    assert settings.flag("OPX_READ_ONLY") is expected and settings.read_only() is expected
    settings.check()


@pytest.mark.parametrize("value", ["2", "enabled", "y", "1 0", "ja", "\u200b1"])
def test_an_unknown_value_is_an_error_and_read_only(monkeypatch, value):
    monkeypatch.setenv("OPX_READ_ONLY", value)
    with pytest.raises(OpxError, match="is not one of 1, true, yes, on, 0, false, no, off"):
        settings.check()
    assert settings.read_only() is True
    allowed, why = settings.write_permission()
    assert not allowed and "read-only" in why


def test_the_cli_and_make_run_stop_on_an_unknown_value(tmp_path):
    env = {"OPX_READ_ONLY": "2", "PATH": "/usr/bin:/bin"}
    for args in (["-m", "opx", "runs", "list", "--db", str(tmp_path / "x.duckdb")],
                 ["-m", "opx.settings"]):
        out = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 1 and out.stderr.strip() == ERROR, out.stderr
    assert not (tmp_path / "x.duckdb").exists()
