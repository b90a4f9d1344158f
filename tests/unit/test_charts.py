"""Every chart the Explorer can draw renders through vl-convert, as exports will."""
import json

import pytest
import vl_convert as vlc

from models import ViewState
from opx.charts import PROVENANCE_SHAPES, explorer_chart
from opx.explorer import explore

STATES = [
    ViewState(),
    ViewState(runs=True, points=True, xscale="linear"),
    ViewState(model="deepseek-r1", workload="1k1k", hw=("gb200-nvl72", "gb300-nvl72"), pct="p50",
              target=50),
    ViewState(hw=()),
    ViewState(pct="p99", y="input"),
]


@pytest.mark.parametrize("state", STATES, ids=lambda s: json.dumps(s.to_query()))
def test_every_explorer_chart_renders(seed_db, catalog, state):
    spec = explorer_chart(explore(seed_db, state, catalog), catalog).to_dict()
    assert vlc.vegalite_to_svg(spec).lstrip().startswith("<svg")
    assert vlc.vegalite_to_png(spec, scale=1)[:4] == b"\x89PNG"


def _layers(spec):
    return spec["layer"]


def test_seed_chart_shows_provenance_target_and_reference_marks(seed_db, catalog):
    spec = explorer_chart(explore(seed_db, ViewState(), catalog), catalog).to_dict()
    layers = _layers(spec)
    marks = [layer["mark"]["type"] for layer in layers]
    shapes = [layer["encoding"]["shape"] for layer in layers if "shape" in layer.get("encoding", {})]
    assert shapes and shapes[0]["scale"]["range"] == list(PROVENANCE_SHAPES.values())
    assert marks.count("rule") >= 2        # the target line and the peak references
    text = json.dumps(spec)
    assert "target 387 tok/s/user" in text
    assert "peak, interactivity not stated" in text
    assert "1.7M" in text and "29.3k" in text
    assert spec["layer"][0]["encoding"]["x"]["scale"]["type"] == "log"
