"""The resolver's rules in the browser (`static/js/target_rules.js`, fed by
`opx.answers.browser_rules.payload`) give what `opx.answers.resolve` gives, at display precision:
each hardware's figure at the target, how it was obtained and the multiple against the baseline,
at random targets over random views drawn from what the database holds, in Chromium."""
from __future__ import annotations

import base64
import math
import random

import pytest

from models import Y_METRICS, ViewState
from opx.answers import browser_rules, explorer, overview
from opx.curves import metrics
from tests.conftest import ROOT

JS = ROOT / "static/js/target_rules.js"
VIEWS, TARGETS = 12, 20                    # 240 targets
EVALUATE = """async ({code, cases}) => {
  const rules = await import("data:text/javascript;base64," + code);
  return cases.map(({payload, targets}) => targets.map((t) => {
    const metric = payload.metric;
    const answers = payload.sides.map((side) => rules.resolve(side, t));
    const base = answers.find((a) => a.hardware === payload.baseline);
    return answers.map((a) => ({
      hardware: a.hardware, cell: rules.cell(a, metric), how: rules.howText(a, t),
      multiple: !base || a === base ? null
        : rules.multipleText(rules.multipleAtTarget(a, base, t, metric))}));
  }));
}"""


def _views(db, catalog, rng: random.Random) -> list[ViewState]:
    """Random views of slices the database holds: a statistic, a metric, two to four of the
    slice's hardware."""
    slices = {pct: overview._slices(db, ViewState(pct=pct), catalog)
              for pct in ("mean", "p50", "p90", "p99")}
    views = []
    while len(views) < VIEWS:
        pct = rng.choice([p for p, s in slices.items() if s])
        model, workload, hardware = rng.choice(slices[pct])
        hw = tuple(rng.sample(hardware, min(len(hardware), rng.randint(2, 4))))
        views.append(ViewState(model=model, workload=workload, hw=hw, pct=pct,
                               y=rng.choice(list(Y_METRICS))))
    return views


def _targets(payload: dict, rng: random.Random) -> list[float]:
    """Log-uniform over the curves' span and beyond it, and some of their points exactly."""
    xs = [x for s in payload["sides"] for env in (s["data"], s["projection"],
                                                  *(e for _, e in s["stricter"]))
          for x in env["x"]]
    lo, hi = (min(xs) / 2, max(xs) * 1.5) if xs else (1.0, 1000.0)
    out = []
    for _ in range(TARGETS):
        if xs and rng.random() < 0.15:
            out.append(rng.choice(xs))
        else:
            out.append(round(math.exp(rng.uniform(math.log(lo), math.log(hi))), 3))
    return [min(max(t, 0.1), 100_000.0) for t in out]


def test_the_browser_gives_the_resolvers_figures_and_multiples(full_db, catalog, browser):
    rng = random.Random(48)
    cases, expected = [], []
    for state in _views(full_db, catalog, rng):
        payload = browser_rules.payload(full_db, state, catalog)
        targets = _targets(payload, rng)
        cases.append({"payload": payload, "targets": targets})
        metric = metrics.y_metric(state.y)
        per_target = []
        for t in targets:
            view = explorer.explore(full_db, state.model_copy(update={"target": t}), catalog)
            per_target.append([{
                "hardware": s.hardware, "cell": s.answer.cell(metric),
                "how": s.answer.how_text(t),
                "multiple": None if s.multiple_at_target is None else s.multiple_at_target.text}
                for s in view.summaries])
        expected.append(per_target)
    page = browser.new_page()
    try:
        got = page.evaluate(EVALUATE, {"code": base64.b64encode(JS.read_bytes()).decode(),
                                       "cases": cases})
    finally:
        page.close()
    checked = 0
    for case, want, have in zip(cases, expected, got):
        for t, w, h in zip(case["targets"], want, have):
            assert h == w, (case["payload"]["sides"][0]["hardware"], t)
            checked += 1
    assert checked == VIEWS * TARGETS >= 200
    kinds = {row["how"].split(" ")[0] for per in expected for rows in per for row in rows}
    assert len(kinds) >= 3, kinds              # the draw met several rules, not one
