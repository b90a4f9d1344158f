"""How the anchored curves' two shape targets pull apart (docs/simulator.md, "Where it fails"),
and what a shape per kind of deployment gives held out ("Between the anchors", `--kinds`).

    .venv/bin/python scripts/shape_tradeoff.py [--kinds]

Scores every shape of the learned family (`y ** p` linear in `x ** q`, each pair of
`opx.simulate.shape.POWERS`) on the envelopes `simulate --validate` holds out, each drawn
through its two end points, and prints the pairs that no other pair beats on both figures: the
median error of the points between and the share of envelopes where the shape does worse than
log-log. The pairs are chosen on the envelopes they are scored on (in sample), so these are
better than any projection can do.

`--kinds`: one shape per kind (MoE or dense model, workload, both, serving mode), each learned
on the built-in measured curves of that kind from the other models (leave one model out; all of
the other models' curves where a kind has fewer than MIN_KIND of them), scored on the same
envelopes beside one shape for all, and the shapes opx draws (`opx.simulate.shape.fit`: the
disaggregated envelopes' own shape where both end points are disaggregated, the default for the
rest; then also each envelope's model's own shape, learned from its other envelopes).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from opx.catalog import load_catalog  # noqa: E402
from opx.simulate import anchor_validation as AV  # noqa: E402
from opx.simulate import shape as SH  # noqa: E402


LOGLOG = SH.Shape(0.0, 0.0, (0.0, 0.0), SH.COVERAGE, 0, "log-log")


def errors(e: dict, s: SH.Shape) -> np.ndarray:
    """APE % of an envelope's points between its ends, drawn through its ends with shape s."""
    x, y = e["x"], e["y"]
    return np.abs(SH.between(x[0], y[0], x[-1], y[-1], x[1:-1], s) / y[1:-1] - 1) * 100


def scores(envelopes: list[dict]) -> list[tuple[float, float, float, float]]:
    """(median APE %, share worse than log-log %, p, q) for every pair of the family."""
    base = [np.median(errors(e, LOGLOG)) for e in envelopes]
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


MIN_KIND = 20          # training curves a kind needs for a shape of its own


def by_kind(envelopes: list[dict], catalog) -> None:
    """Median held-out error and share worse than log-log with a shape per kind."""
    curves = SH.measured_curves(catalog)

    def moe(model: str) -> bool:
        return catalog.models[model].experts > 0
    kinds = {"one shape for all": lambda m, w, d: "all",
             "MoE or dense": lambda m, w, d: moe(m),
             "workload (ISL/OSL)": lambda m, w, d: w,
             "MoE or dense, and workload": lambda m, w, d: (moe(m), w),
             "aggregated or disaggregated": lambda m, w, d: d}
    print(f"{len(envelopes)} measured envelopes, each through its two end points, the shape "
          "learned leaving its model out:")
    print(f"{'shape per':>28} {'median APE %':>13} {'worse than log-log, % of envelopes':>36}"
          f" {'envelopes on all models' + chr(39) + ' shape':>30}")
    for name, kind in kinds.items():
        shapes: dict = {}
        per, worse, fallback, fell_back = [], 0, set(), 0
        with np.errstate(all="ignore"):
            for e in envelopes:
                key = (e["model"], kind(e["model"], e["workload"], e["disaggregated"]))
                if key not in shapes:
                    other = [c for c in curves if c.model != e["model"]]
                    same = [c for c in other if kind(c.model, c.workload, c.disaggregated)
                            == key[1]]
                    shapes[key] = SH.fit_one(same if len(same) >= MIN_KIND else other)
                    if len(same) < MIN_KIND:
                        fallback.add(key)
                ape = errors(e, shapes[key])
                fell_back += key in fallback
                per.append(ape)
                worse += np.median(ape) > np.median(errors(e, LOGLOG))
        print(f"{name:>28} {np.median(np.concatenate(per)):13.1f} "
              f"{100.0 * worse / len(envelopes):36.1f} {fell_back:30d}")
    # the shapes opx draws (opx.simulate.shape.fit, Shapes.pick): the disaggregated envelopes'
    # own, learned from the other models, where both end points are disaggregated; else, with
    # the envelope's model left out, the default; with the envelope alone left out, the shape
    # of its model's other envelopes
    for name, own_model in (("disaggregated apart (opx)", False),
                            ("and the model's own (opx)", True)):
        per, worse, fitted = [], 0, {}
        with np.errstate(all="ignore"):
            for e in envelopes:
                if e["model"] not in fitted:
                    fitted[e["model"]] = SH.fit(
                        [c for c in curves if c.model != e["model"]],
                        own_models=[c for c in curves if c.model == e["model"]])
                shapes = fitted[e["model"]] if own_model else fitted[e["model"]].without_models()
                ends = e["point_disaggregated"][[0, -1]]       # what the two anchors are
                ape = errors(e, shapes.pick(bool(ends.all()),
                                            (e["hardware"], e["model"], e["workload"])))
                per.append(ape)
                worse += np.median(ape) > np.median(errors(e, LOGLOG))
        print(f"{name:>28} {np.median(np.concatenate(per)):13.1f} "
              f"{100.0 * worse / len(envelopes):36.1f} {'-':>30}")


def main() -> None:
    catalog = load_catalog()
    envs = [e for e in AV.envelopes(None, catalog) if e["x"].size >= AV.MIN_FRONTIER]
    if "--kinds" in sys.argv[1:]:
        by_kind(envs, catalog)
        return
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
