"""`export -o`: only regular files are written or replaced, atomically, and every refusal is one
line `error: <path>: <what>`; a link that cannot be read is an error, not a traceback; names with
control characters are printed escaped (opx.errors.shown / printable)."""
import errno
import os
import stat

import pytest

from opx import cli

from opx.publish import output
from opx.errors import OpxError, OutputError, printable, shown
from tests.conftest import ROOT

LINK = "/compare?a=vr-nvl72&b=gb300-nvl72"
FIX = ROOT / "tests" / "fixtures" / "opx-csv"


def export(db, out, *extra, link=LINK):
    return cli.main(["export", link, "--format", "csv", "-o", str(out), "--db", str(db), *extra])


def _leftovers(folder):
    return [p.name for p in folder.iterdir() if p.name.endswith(".part")]


@pytest.mark.parametrize("name, problem", [
    ("missing/out.csv", "does not exist: create it first"),
    ("folder", "is a folder, not a regular file"),
    ("", "no file name given"),
    ("a" * 300 + ".csv", "the file name is too long"),
    ("fifo", "is a pipe (FIFO), not a regular file"),
    ("link.csv", "is a symbolic link"),
])
def test_refused_targets_are_one_line_errors_and_leave_nothing(seed_db, tmp_path, monkeypatch,
                                                               capsys, name, problem):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "target.csv").write_text("kept\n")
    (tmp_path / "link.csv").symlink_to(tmp_path / "target.csv")
    assert export(seed_db, name) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {shown(name)}: ") and problem in err and err.count("\n") == 1
    assert (tmp_path / "target.csv").read_text() == "kept\n"
    assert (tmp_path / "link.csv").is_symlink() and (tmp_path / "folder").is_dir()
    assert stat.S_ISFIFO(os.lstat(tmp_path / "fifo").st_mode)
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("device", ["/dev/full", "/dev/null"])
def test_a_device_is_never_replaced(seed_db, capsys, device):
    if not os.path.exists(device):
        pytest.skip(f"{device} is absent")
    assert export(seed_db, device) == 1
    assert "is a device, not a regular file" in capsys.readouterr().err
    assert stat.S_ISCHR(os.stat(device).st_mode)


def test_a_file_opx_cannot_create_next_to(seed_db, capsys):
    if not os.path.isfile("/proc/version"):
        pytest.skip("no /proc")
    assert export(seed_db, "/proc/version") == 1
    err = capsys.readouterr().err
    assert err.startswith("error: /proc/version: ") and "Traceback" not in err


def test_a_regular_file_is_replaced_whole_and_keeps_its_permissions(seed_db, tmp_path, capsys):
    out = tmp_path / "out.csv"
    out.write_text("old\n")
    out.chmod(0o640)
    assert export(seed_db, out) == 0
    printed = capsys.readouterr().out
    assert printed == f"{out}: csv, {out.stat().st_size:,} bytes\n"
    assert out.read_text() != "old\n"
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert _leftovers(tmp_path) == []


def test_a_failed_write_leaves_the_old_file_and_no_part(tmp_path, monkeypatch):
    out = tmp_path / "out.csv"
    out.write_text("old\n")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(output.os, "fsync", full)
    with pytest.raises(OutputError, match="No space left on device") as err:
        output.write_file(str(out), b"new")
    assert str(err.value) == f"{out}: cannot be written: No space left on device"
    assert out.read_text() == "old\n" and _leftovers(tmp_path) == []


def test_links_that_cannot_be_read_are_errors(seed_db, tmp_path, capsys):
    assert export(seed_db, tmp_path / "x.json", link="http://[::1") == 1
    err = capsys.readouterr().err
    assert err.startswith("error: http://[::1: not a link opx can read") and err.count("\n") == 1
    code = cli.main(["export", "/compare?a=vr-nvl72&b=vr-nvl72", "--format", "json",
                     "-o", str(tmp_path / "same.json"), "--db", str(seed_db)])
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "same.json").stat().st_size > 0


# -- names printed escaped --------------------------------------------------------------------

def test_control_characters_are_escaped_in_messages():
    assert printable("plain name é.json") == "plain name é.json"
    assert printable("a\x1b[2Jb\nc\u202ed") == "a\\x1b[2Jb\\nc\\u202ed"
    assert shown("ok.csv") == "ok.csv" and shown("") == "''"
    assert shown("x\nerror: y") == "'x\\nerror: y'"
    err = OpxError("bad\x1b[31m.json", "line 3", "unknown hardware `\x1b]0;t\x07`")
    text = str(err)
    assert text == "'bad\\x1b[31m.json': line 3: unknown hardware `\\x1b]0;t\\x07`"
    assert text.isprintable() and err.file == "bad\x1b[31m.json"


def test_export_prints_an_odd_name_escaped(seed_db, tmp_path, capsys):
    out = tmp_path / "x\x1b[2J\nerror: fake.csv"
    assert export(seed_db, out) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(repr(str(out))) and printed.count("\n") == 1
    assert "\x1b" not in printed


def test_ingest_prints_odd_file_names_escaped(tmp_path, capsys):
    odd = tmp_path / "run\x1b[2J\nerror: fake.csv"
    odd.write_bytes((FIX / "h200-sweep-part1.csv").read_bytes())
    bad = tmp_path / "bad\x1b]0;title\x07.json"
    bad.write_text('{"completed": ')
    code = cli.main(["ingest", str(odd), str(bad), "--db", str(tmp_path / "x.duckdb")])
    out, err = capsys.readouterr()
    assert code == 1
    for text in (out, err):
        assert "\x1b" not in text and "\x07" not in text
        assert not any(line.startswith("error: fake") for line in text.splitlines())
    assert shown(odd) in out and "1 run(s), 2 point(s) added" in out
    assert err.startswith(f"error: {shown(bad)}: ")
