"""How the anchored curves' two shape targets pull apart (docs/simulator.md, "Where it fails").

    .venv/bin/python scripts/shape_tradeoff.py

Scores every shape of the learned family (`y ** p` linear in `x ** q`, each pair of
`opx.simulate.shape.POWERS`) on the envelopes `simulate --validate` holds out, each drawn
through its two end points, and prints the pairs that no other pair beats on both figures: the
median error of the points between and the share of envelopes where the shape does worse than
log-log. The pairs are chosen on the envelopes they are scored on (in sample), so these are
better than any projection can do.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from opx.catalog import load_catalog  # noqa: E402
from opx.simulate import anchor_validation as AV  # noqa: E402
from opx.simulate import shape as SH  # noqa: E402


def scores(envelopes: list[dict]) -> list[tuple[float, float, float, float]]:
    """(median APE %, share worse than log-log %, p, q) for every pair of the family."""
    loglog = SH.Shape(0.0, 0.0, (0.0, 0.0), SH.COVERAGE, 0, "log-log")

    def errors(e: dict, s: SH.Shape) -> np.ndarray:
        x, y = e["x"], e["y"]
        return np.abs(SH.between(x[0], y[0], x[-1], y[-1], x[1:-1], s) / y[1:-1] - 1) * 100
    base = [np.median(errors(e, loglog)) for e in envelopes]
    out = []
    with np.errstate(all="ignore"):
        for p in SH.POWERS:
            for q in SH.POWERS:
                s = SH.Shape(p, q, (0.0, 0.0), SH.COVERAGE, 0, "candidate")
                per = [errors(e, s) for e in envelopes]
                worse = sum(np.median(a) > b for a, b in zip(per, base))
                out.append((float(np.median(np.concatenate(per))),
                            100.0 * worse / len(envelopes), p, q))
    return sorted(out)


def main() -> None:
    envs = [e for e in AV.envelopes(None, load_catalog()) if e["x"].size >= AV.MIN_FRONTIER]
    print(f"{len(envs)} measured envelopes, each through its two end points; pairs no other "
          "pair beats on both figures:")
    print(f"{'median APE %':>13} {'worse than log-log, % of envelopes':>36}   p     q")
    fewest = float("inf")
    for median, worse, p, q in scores(envs):
        if worse < fewest:
            fewest = worse
            print(f"{median:13.1f} {worse:36.1f}   {p + 0.0:<5g} {q + 0.0:g}")


if __name__ == "__main__":
    main()
