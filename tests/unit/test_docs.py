"""A documented option that is missing from the docs fails the build (Datasette's test_docs)."""
import re

import pytest

from models.view import QUERY_FIELDS
from opx import metrics
from opx.cli import build_parser
from tests.conftest import ROOT


def _doc(name):
    return (ROOT / "docs" / name).read_text()


@pytest.mark.parametrize("param", QUERY_FIELDS)
def test_every_url_parameter_is_documented(param):
    assert re.search(rf"\| `{re.escape(param)}` \|", _doc("url-params.md")), param


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
    assert (ROOT / "docs" / "formats" / f"{name}.md").exists(), name
    assert f"| `{name}` |" in (ROOT / "docs" / "formats" / "README.md").read_text()


@pytest.mark.parametrize("fmt", ["png", "svg", "pdf", "html", "csv", "json", "vl.json", "parquet"])
def test_every_export_format_is_in_the_readme(fmt):
    from opx.export import FORMATS
    assert fmt in FORMATS
    assert fmt in (ROOT / "README.md").read_text()


def _sim_fields():
    from models.simulate_view import SIM_FIELDS
    return list(SIM_FIELDS)


@pytest.mark.parametrize("param", _sim_fields())
def test_every_simulate_parameter_is_documented(param):
    text = _doc("url-params.md").split("## Simulate", 1)[1].split("\n## ", 1)[0]
    assert f"`{param}`" in text, param
