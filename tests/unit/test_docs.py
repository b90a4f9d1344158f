"""The docs are the contract: what the code offers must be in them, what they cite must exist, and
they describe what is true now (Datasette's test_docs, extended)."""
import ast
import importlib
import re

import pytest

from models.view import QUERY_FIELDS
from opx.curves import metrics
from opx.cli import build_parser
from opx.links import PAGES
from tests.conftest import ROOT

DOCS = ROOT / "docs"
# The design lives here; the docs point at it, never outside the repository.
ARCHITECTURE = DOCS / "architecture.md"
OUTSIDE_DESIGN = "DESIGN" + ".md"     # spelt apart so this file does not match itself


def _doc(name):
    return (DOCS / name).read_text()


def _section(text: str, heading: str) -> str:
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


# --- everything the code offers is documented --------------------------------------------------

@pytest.mark.parametrize("path", list(PAGES))
def test_every_page_is_documented(path):
    assert f"| `{path}` |" in _doc("pages.md"), f"{path} has no row in docs/pages.md"
    assert f"(`{path}`)" in _doc("url-params.md"), f"{path} has no section in docs/url-params.md"


@pytest.mark.parametrize("param", QUERY_FIELDS)
def test_every_url_parameter_is_documented(param):
    assert re.search(rf"\| `{re.escape(param)}` \|", _doc("url-params.md")), param


def _sim_fields():
    from models.simulate_view import SIM_FIELDS
    return list(SIM_FIELDS)


@pytest.mark.parametrize("param", _sim_fields())
def test_every_simulate_parameter_is_documented(param):
    assert f"`{param}`" in _section(_doc("url-params.md"), "## Simulate"), param


@pytest.mark.parametrize("key", list(metrics.Y_METRICS) + [f"interactivity_{p}"
                                                           for p in ("p50", "p90", "p99")])
def test_every_metric_is_documented(key):
    assert f"| `{key}` |" in _doc("metrics.md")


def _commands(parser, prefix=()):
    for action in parser._actions:
        if getattr(action, "choices", None) and isinstance(action.choices, dict):
            for name, sub in action.choices.items():
                nested = list(_commands(sub, prefix + (name,)))
                yield from nested or [prefix + (name,)]


@pytest.mark.parametrize("command", list(_commands(build_parser())), ids=" ".join)
def test_every_cli_command_is_in_the_readme(command):
    assert "python -m opx " + " ".join(command) in (ROOT / "README.md").read_text()


def _format_pages():
    from opx.ingest.core import formats
    return [m.NAME for m in formats()]


@pytest.mark.parametrize("name", _format_pages())
def test_every_import_format_has_a_page_and_a_row(name):
    assert (DOCS / "formats" / f"{name}.md").exists(), name
    assert f"| `{name}` |" in (DOCS / "formats" / "README.md").read_text()


@pytest.mark.parametrize("fmt", ["png", "svg", "pdf", "html", "csv", "json", "vl.json", "parquet"])
def test_every_export_format_is_in_the_readme(fmt):
    from opx.publish.export import FORMATS
    assert fmt in FORMATS
    assert fmt in (ROOT / "README.md").read_text()


def test_every_export_format_is_in_sharing():
    from opx.publish.export import FORMATS
    rows = [line for line in _doc("sharing.md").splitlines() if line.startswith("| `")]
    missing = [f for f in FORMATS if not any(f"`{f}`" in row for row in rows)]
    assert not missing, f"export formats missing from docs/sharing.md: {missing}"


# --- the docs are reference, not a diary, and the design is in the repository -----------------

def _markdown():
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


DIARY = re.compile(r"stop [0-9]+|session [0-9]+", re.IGNORECASE)


@pytest.mark.parametrize("path", _markdown(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_doc_reads_as_a_diary(path):
    hits = [f"{i}: {line.strip()}" for i, line in enumerate(path.read_text().splitlines(), 1)
            if DIARY.search(line)]
    assert not hits, (f"{path.relative_to(ROOT)} reads as a diary (history goes to CHANGELOG.md, "
                      f"dated, without session numbers): {hits}")


_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".pytest_cache",
              ".hypothesis", ".mypy_cache", ".ruff_cache"}
_TEXT = {".py", ".md", ".toml", ".txt", ".ini", ".cfg", ".sql", ".csv", ".json", ".yml", ".yaml",
         ".sh", ".html", ".js", ".css"}


def _repository_text_files():
    for path in sorted(ROOT.rglob("*")):
        rel = path.relative_to(ROOT)
        if any(part in _SKIP_DIRS for part in rel.parts) or not path.is_file():
            continue
        if path.suffix in _TEXT or path.name in ("Makefile", "run"):
            if path.stat().st_size < 2_000_000:
                yield path


def test_the_design_is_in_the_repository():
    """Nothing points outside the repository for the design: it is docs/architecture.md. The
    changelog may name the old file; third-party fixtures under ../shared/fixtures are data, and
    citing them is fine."""
    assert ARCHITECTURE.is_file()
    hits = []
    for path in _repository_text_files():
        if path.name == "CHANGELOG.md":
            continue
        for i, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if OUTSIDE_DESIGN in line:
                hits.append(f"{path.relative_to(ROOT)}:{i}")
    assert not hits, f"cite docs/architecture.md for the design instead: {hits}"


@pytest.mark.parametrize("path", _markdown(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_doc_defers_to_an_outside_design(path):
    hits = [f"{i}: {line.strip()}" for i, line in enumerate(path.read_text().splitlines(), 1)
            if re.search(r"\bDESIGN\b(?!_)", line)]
    assert not hits, f"{path.relative_to(ROOT)} defers to an outside design: {hits}"


def test_readme_points_at_the_architecture():
    assert "docs/architecture.md" in (ROOT / "README.md").read_text()


# --- what the design docs cite exists ----------------------------------------------------------

CITING = ["architecture.md", "decisions.md", "simulator.md"]
_PATH = re.compile(r"^(?:app\.py|(?:app_pages|ui|models|opx|data|docs|tests|bench)/[\w./-]*)$")
_NAME = re.compile(r"^(?:opx|models|ui)(?:\.\w+)+$")


def _cited(name):
    text = re.sub(r"```.*?```", "", _doc(name), flags=re.S)      # code blocks hold formulas
    return sorted(set(re.findall(r"`([^`\s]+)`", text)))


@pytest.mark.parametrize("name", CITING)
def test_every_cited_path_exists(name):
    missing = [c for c in _cited(name) if _PATH.match(c) and "<" not in c and "*" not in c
               and not (ROOT / c.rstrip("/")).exists()]
    assert not missing, f"docs/{name} cites paths that do not exist: {missing}"


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


@pytest.mark.parametrize("name", CITING)
def test_every_cited_name_exists(name):
    missing = [c for c in _cited(name) if _NAME.match(c) and not _resolves(c)]
    assert not missing, f"docs/{name} cites names that do not exist: {missing}"


# --- the layers import only what docs/architecture.md allows -----------------------------------

FORBIDDEN = {
    "models": {"streamlit", "duckdb", "pandas", "altair", "os", "io", "pathlib", "shutil",
               "subprocess", "socket", "urllib.request", "requests", "opx", "ui", "app_pages"},
    "opx": {"streamlit", "ui", "app_pages"},
    "ui": {"duckdb"},
    "app_pages": {"duckdb"},
    "app.py": {"duckdb"},
}
SQL = re.compile(r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|DELETE\s+FROM|UPDATE\s+\w+\s+SET|"
                 r"CREATE\s+(TABLE|VIEW|INDEX)|DROP\s+(TABLE|VIEW))\b", re.S)


def _layer_files(layer):
    path = ROOT / layer
    return [path] if path.is_file() else sorted(path.rglob("*.py"))


def _imports(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module


def _forbidden(module, banned):
    return any(module == b or module.startswith(b + ".") for b in banned)


@pytest.mark.parametrize("layer", list(FORBIDDEN))
def test_layers_import_only_what_the_architecture_allows(layer):
    bad = []
    for path in _layer_files(layer):
        tree = ast.parse(path.read_text(), str(path))
        bad += [f"{path.relative_to(ROOT)}: {m}" for m in _imports(tree)
                if _forbidden(m, FORBIDDEN[layer])]
        if layer in ("ui", "app_pages", "app.py"):
            bad += [f"{path.relative_to(ROOT)}:{n.lineno}: SQL" for n in ast.walk(tree)
                    if isinstance(n, ast.Constant) and isinstance(n.value, str)
                    and SQL.search(n.value)]
    assert not bad, f"{layer} breaks docs/architecture.md's layer rules: {bad}"


def test_the_architecture_states_the_layer_rules():
    text = ARCHITECTURE.read_text()
    for words in ("no I/O", "no Streamlit", "duckdb", "bound parameter"):
        assert words in text, words
