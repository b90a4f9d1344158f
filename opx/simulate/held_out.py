"""The held-out error a simulated curve carries beside it on a chart: the largest error the
validations on record give for its model or its system (docs/simulator.md, "Errors on screen").

Unanchored, a curve is as good as the model on a system left out of the calibration (throughput,
leave one system out: data/simulator/calibration.json) and on a model left out of it (leave one
model out: data/simulator/anchoring.json). Anchored, as good as the anchored projection of the
same system and model with the points between two anchors held out (anchoring.json). A figure
above LIMIT is drawn beside the curve, not only in the notes.
"""
from __future__ import annotations

from dataclasses import dataclass

LIMIT = 50.0          # % median error from which a curve carries its error beside it


@dataclass(frozen=True)
class HeldOutError:
    mdape: float
    what: str

    @property
    def label(self) -> str:
        return f"held-out error {self.mdape:.0f}% ({self.what})"


def _system_of(hardware: str) -> str | None:
    from opx.simulate.hardware import SILICON_SYSTEMS
    return next((s for s, hw in SILICON_SYSTEMS.items() if hw == hardware), None)


def figures(hardware: str, model: str, anchored: bool) -> list[HeldOutError]:
    """Every held-out figure on record for this curve."""
    from opx.simulate import anchor_validation
    from opx.simulate.api import load_calibration
    doc = anchor_validation.load() or {}
    system = _system_of(hardware)
    out: list[HeldOutError] = []
    if anchored:
        for r in doc.get("per_system_model", []):
            if r.get("system") == system and r.get("model") == model:
                out.append(HeldOutError(float(r["anchored_mdape"]),
                                        f"anchored, points between two anchors held out on "
                                        f"{hardware}, {model}"))
        return out
    lomo = doc.get("overall", {}).get("unanchored_leave_one_model_out", {}).get(model)
    if lomo:
        out.append(HeldOutError(float(lomo["mdape"]), f"unanchored, {model} left out of the "
                                                      "calibration"))
    cal = load_calibration() or {}
    for r in cal.get("validation", {}).get("per_system", []):
        if r.get("system") == system and r.get("throughput_mdape") is not None:
            out.append(HeldOutError(float(r["throughput_mdape"]),
                                    f"unanchored throughput, {hardware} left out of the "
                                    "calibration"))
    return out


def beside_curve(hardware: str, model: str, anchored: bool) -> HeldOutError | None:
    """The largest held-out error of this curve when it is above LIMIT, else None."""
    worst = max(figures(hardware, model, anchored), key=lambda e: e.mdape, default=None)
    return worst if worst is not None and worst.mdape > LIMIT else None
