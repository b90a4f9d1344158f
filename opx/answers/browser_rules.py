"""What the browser needs to apply the resolver's rules at any target
(`static/js/target_rules.js`, which names its counterparts in `opx.answers.resolve`): per
hardware of a view, its data envelope, each stricter statistic's envelope and its projection,
each point with the configuration it names, its repeat set's spread and its count; how base
throughput becomes the view's metric; and the words for no figure. Nothing here depends on the
target. No Streamlit."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from models import Catalog, ViewState
from opx.answers import explorer, resolve
from opx.curves import metrics


def _envelope(inputs: resolve.Inputs, hw: str, simulated: bool, statistic: str | None,
              pct: str) -> dict:
    """An envelope by interactivity, as columns (the browser reads arrays)."""
    rows = inputs.envelope_rows(hw, simulated, statistic)

    def ends(name: str) -> list[float]:
        return [float(v) if pd.notna(v := getattr(r, name, None)) else float(r.tput) for r in rows]
    return {"x": [float(r.x) for r in rows], "tput": [float(r.tput) for r in rows],
            "lo": ends("tput_lo"), "hi": ends("tput_hi"),
            "runs": [resolve.repeat_runs(r) for r in rows],
            "provenance": [str(r.provenance) for r in rows],
            "text": [resolve.config_of(r, pct).text() for r in rows]}


def payload(db: Path, state: ViewState, catalog: Catalog) -> dict:
    """The view's rules inputs for the browser (module doc)."""
    prepared = explorer.prepared(db, state, catalog)
    metric = metrics.y_metric(state.y)
    sides = []
    for hw in state.hw:
        inputs, name = prepared.inputs[hw], catalog.hardware_name(hw)
        econ = prepared.econ.get(hw)
        form = (metric.linear_form(econ.usd_per_gpu_hour, econ.watts_per_gpu) if econ else None) \
            if metric.derived else (1.0, 1.0)
        none = {kinds: resolve.why_none(inputs, hw, name, state.target, state.pct, kinds)
                for kinds in ((False, True), (True,))}
        sides.append({
            "hardware": hw, "name": name, "pct": state.pct, "direction": metric.direction,
            "convert": {"scale": form[0], "power": form[1]} if form else None,
            "data": _envelope(inputs, hw, False, None, state.pct),
            "stricter": [[q, _envelope(inputs, hw, False, q, q)]
                         for q in resolve.STRICTER[state.pct]],
            "projection": _envelope(inputs, hw, True, None, state.pct),
            "no_figure": {"reason": none[False, True][0], "fix": none[False, True][1]},
            "no_projection": {"reason": none[True,][0], "fix": none[True,][1]}})
    return {"metric": {"key": metric.key, "kind": metric.kind, "unit": metric.unit,
                       "direction": metric.direction, "better_word": metric.better_word,
                       "worse_word": metric.worse_word},
            "baseline": state.effective_baseline(), "target": state.target, "sides": sides}
