"""Time one system's full simulator search (layouts x P:D splits x MTP x ~20 concurrencies).

    .venv/bin/python bench/bench_simulator.py [hardware] [model] [workload] [--json FILE]

Prints the seconds per search and, when the `aiconfigurator` package is importable, the ratio to
its equivalent search (AIConfigurator's `cli default` on the same system, model and ISL/OSL)."""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from opx.catalog import builtin_catalog  # noqa: E402
from opx.simulate import SimKnobs, simulate  # noqa: E402

AIC_MODEL = "nvidia/DeepSeek-V3.1-NVFP4"      # a DeepSeek-V3/R1 architecture AIC knows offline
AIC_SYSTEMS = {"gb300-nvl72": "gb300", "gb200-nvl72": "gb200", "b200": "b200_sxm",
               "b300": "b300_sxm", "h200": "h200_sxm", "h100": "h100_sxm"}


def time_opx(hw: str, model: str, workload: str, repeats: int = 3) -> tuple[float, dict]:
    cat = builtin_catalog()
    simulate(hw, model, workload, None, SimKnobs(mtp_depth=3), cat)       # warm-up (imports, caches)
    best, res = float("inf"), None
    for _ in range(repeats):
        t = time.perf_counter()
        res = simulate(hw, model, workload, None, SimKnobs(mtp_depth=3), cat)
        best = min(best, time.perf_counter() - t)
    return best, res.parameters["search"]


# The seed's figures of Vera Rubin NVL72 on DeepSeek-V4.1-Flash AgentX (data/published/points.csv):
# the 1.7 M tok/s/GPU at 387 tok/s/user P90 preview, the 2.52 M peak and the 1,810 single session.
SEED_ANCHORS = [
    {"run_id": "vr-agentx", "provenance": "preview", "interactivity_p90": 387.0,
     "throughput_total_per_gpu": 1.7e6},
    {"run_id": "vr-agentx", "provenance": "preview", "throughput_total_per_gpu": 2.52e6},
    {"run_id": "vr-tp8-single", "provenance": "preview", "interactivity_p90": 1810.0,
     "concurrency": 1},
]


def time_anchor_fit(repeats: int = 2) -> tuple[float, float, dict]:
    """Seconds of one anchored fit of the built-in Rubin projection (MTP 0-1) to the seed's
    figures, the seconds of its plain search, and the fit's summary."""
    import pandas as pd
    from opx.simulate import anchor
    cat = builtin_catalog()
    anchors = anchor.anchors_from_points(pd.DataFrame(SEED_ANCHORS), prefer="p90")
    args = ("vr-nvl72", "deepseek-v4.1-flash", "agentx", None, SimKnobs(mtp_depth=1), cat)
    simulate(*args)
    t = time.perf_counter()
    simulate(*args)
    search = time.perf_counter() - t
    best, fit = float("inf"), None
    for _ in range(repeats):
        t = time.perf_counter()
        fit = anchor.fit(*args, anchors)
        best = min(best, time.perf_counter() - t)
    return best, search, fit.summary()


def aic_python() -> str | None:
    """The interpreter that has `aiconfigurator`: $OPX_AIC_PYTHON (a separate virtualenv, so the
    project's own does not carry AIConfigurator's dependencies), else this one if it has it."""
    import os
    import subprocess
    python = os.environ.get("OPX_AIC_PYTHON") or sys.executable
    found = subprocess.run([python, "-c", "import aiconfigurator"], capture_output=True)
    return python if found.returncode == 0 else None


def time_aic(hw: str, workload: str) -> float | None:
    python = aic_python()
    if python is None:
        return None
    import subprocess
    import tempfile
    cat = builtin_catalog()
    wl = cat.workloads[workload]
    # The command of ../shared/fixtures/aiconfigurator (SOURCES.md), on the benchmark's inputs.
    save_dir = tempfile.mkdtemp(prefix="opx-bench-aic-")
    cmd = [python, "-m", "aiconfigurator.cli.main", "default", "--model-path", AIC_MODEL,
           "--total-gpus", str(cat.hardware[hw].system_gpus), "--system", AIC_SYSTEMS.get(hw, hw),
           "--isl", str(wl.isl), "--osl", str(wl.osl), "--save-dir", save_dir]
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"aiconfigurator run failed ({done.returncode}): {done.stderr.strip()[-300:]}")
        return None
    return time.perf_counter() - t


TARGET_SECONDS = 1.0        # "at most about a second" per full search
NOT_INSTALLED = ("not installed (pip install aiconfigurator, or OPX_AIC_PYTHON=a python that has "
                 "it); no ratio")


def figures(argv: list[str]) -> list:
    """The figures for bench/run_all.py (seconds per search; the ratio when AIConfigurator is
    installed)."""
    from _common import Figure
    argv = [a for a in argv if not a.startswith("--")]
    hw, model, workload = (argv + ["gb300-nvl72", "deepseek-r1", "1k1k"][len(argv):])[:3]
    seconds, search = time_opx(hw, model, workload)
    out = [Figure("simulator", f"one full configuration search ({hw}, {model}, {workload})",
                  seconds, "s", f"<= ~{TARGET_SECONDS:g} s", seconds <= TARGET_SECONDS * 1.2,
                  f"{search['layouts_evaluated']} layouts, {search['rows_evaluated']} operating "
                  "points, MTP 0-3, best of 3")]
    fit_s, search_s, summary = time_anchor_fit()
    out.append(Figure("simulator", "anchored fit of the Rubin projection to the seed's 3 figures",
                      fit_s, "s", "<= a few s", fit_s <= 5.0,
                      f"{summary['evaluations']} evaluations, {fit_s / search_s:.1f}x one search "
                      f"({search_s:.2f} s)"))
    aic = time_aic(hw, workload)
    out.append(Figure("simulator", "AIConfigurator's search ÷ opx-sim's, same inputs",
                      None if aic is None else aic / seconds, "x",
                      detail=NOT_INSTALLED if aic is None else f"aiconfigurator {aic:.1f} s"))
    return out


def main(argv: list[str]) -> None:
    if "--json" in argv:
        from _common import emit
        emit(figures(argv[:argv.index("--json")]), argv)
        return
    hw = argv[0] if argv else "gb300-nvl72"
    model = argv[1] if len(argv) > 1 else "deepseek-r1"
    workload = argv[2] if len(argv) > 2 else "1k1k"
    seconds, search = time_opx(hw, model, workload)
    print(f"opx-sim search {hw} x {model} x {workload} (MTP 0-3): {seconds:.2f} s "
          f"({search['layouts_evaluated']} layouts, {search['rows_evaluated']} operating points)")
    fit_s, search_s, summary = time_anchor_fit()
    print(f"anchored fit, vr-nvl72 x deepseek-v4.1-flash x agentx (MTP 0-1) to the seed's 3 "
          f"figures: {fit_s:.2f} s, {summary['evaluations']} evaluations, {fit_s / search_s:.1f}x "
          f"one search ({search_s:.2f} s); residuals "
          + ", ".join(f"{r['residual_pct']:+.1f} %" for r in summary["anchors"]))
    aic = time_aic(hw, workload)
    if aic is None:
        print(f"aiconfigurator: {NOT_INSTALLED}")
    else:
        print(f"aiconfigurator default search: {aic:.1f} s; ratio aiconfigurator / opx-sim = "
              f"{aic / seconds:.1f}x")


if __name__ == "__main__":
    main(sys.argv[1:])
