"""The tree a newcomer walks: a handful of modules directly in opx/, packages that say what they
own and may import, and the layers as an import-linter contract (.importlinter) that bites."""
import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                              "sys.exit(lint_imports_command())"]


def test_at_most_eight_modules_sit_directly_in_opx():
    direct = sorted(p.name for p in (ROOT / "opx").glob("*.py"))
    assert len(direct) <= 8, direct


def test_every_package_says_what_it_owns_and_what_it_may_import():
    for init in sorted((ROOT / "opx").rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        assert doc, f"{init.relative_to(ROOT)} has no docstring"
        if init.parent != ROOT / "opx":
            first = doc.split("\n\n")[0]
            assert "May import" in first and len(first.splitlines()) == 2, (
                f"{init.relative_to(ROOT)}: its first two lines should say what it owns and "
                "what it may import")


def _lint(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*LINT, "--config", str(root / ".importlinter")], cwd=root,
                          capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})


def test_the_import_contracts_are_kept():
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "broken" in result.stdout and " 0 broken" in result.stdout


def test_an_upward_import_or_a_circle_breaks_the_contract(tmp_path):
    """The contract is not vacuous: a copy of the tree where the curves import a chart builder
    (a layer far above them) fails, naming the import."""
    for name in ("opx", "models", "ui"):
        shutil.copytree(ROOT / name, tmp_path / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.sql", "migrations"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    frontier = tmp_path / "opx" / "curves" / "frontier.py"
    frontier.write_text(frontier.read_text() + "\n\ndef _upward():\n"
                        "    from opx.publish import charts  # noqa: F401\n")
    result = _lint(tmp_path)
    assert result.returncode != 0
    assert "opx.curves.frontier -> opx.publish.charts" in result.stdout
