"""Every value a page or an export cannot honour is named: an empty link is refused by the CLI,
a saved view that does not exist and runs that no longer exist are notices in the export."""
import json

from opx import cli


def export(capsys, db, link, fmt="json", tmp_path=None):
    out = tmp_path / f"out.{fmt}"
    code = cli.main(["export", link, "--format", fmt, "-o", str(out), "--db", str(db)])
    captured = capsys.readouterr()
    return code, captured.err, out


def test_an_empty_link_is_refused(seed_db, tmp_path, capsys):
    for link in ("", "   "):
        code, err, out = export(capsys, seed_db, link, tmp_path=tmp_path)
        assert code == 1 and err.startswith("error: LINK: is empty; give a share link")
        assert not out.exists()


def test_a_saved_view_that_does_not_exist_is_a_notice(seed_db, tmp_path, capsys):
    for fmt in ("json", "brief-html"):
        code, err, out = export(capsys, seed_db, "/?view=no-such-view", fmt, tmp_path)
        assert code == 0 and "note: LINK: There is no saved view `no-such-view`" in err
    summary = json.loads((tmp_path / "out.json").read_text())
    assert any("no saved view" in n for n in summary["notices"])


def test_a_saved_view_is_opened_by_the_export(seed_db, tmp_path, capsys):
    from models import ViewState
    from opx import store
    from opx.store import saved_views
    db = tmp_path / "opx.duckdb"
    db.write_bytes(seed_db.read_bytes())
    with store.writing(db) as con:
        slug = saved_views.save(con, "Rubin at 500", "/compare", ViewState(target=500), []).slug
    code, err, out = export(capsys, db, f"/?view={slug}", tmp_path=tmp_path)
    summary = json.loads(out.read_text())
    assert code == 0 and summary["page"] == "compare" and summary["target_tok_s_user"] == 500


def test_runs_that_no_longer_exist_are_named(seed_db, tmp_path, capsys):
    code, err, out = export(capsys, seed_db, "/compare?ra=0123456789abcdef&rb=fedcba9876543210",
                            tmp_path=tmp_path)
    assert code == 0
    assert "Run `0123456789abcdef` in the link no longer exists" in err
    assert "Run `fedcba9876543210` in the link no longer exists" in err
    assert json.loads(out.read_text())["a"]["hardware"] == "vr-nvl72"
