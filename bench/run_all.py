"""Run every benchmark and print one table of figures (`make bench`).

    .venv/bin/python bench/run_all.py [--only simulator,import,reader_wait,marks,explorer,explorer_undated,cold_start,browser,api]

Each benchmark runs in its own process (fresh Streamlit caches, its own memory), writes its
figures as JSON, and shares one folder of synthetic databases with the others, so the 1M-point
database is built once. Each figure is a ratio or a time measured within one run, since the
machine is shared and noisy; nothing here is a pass/fail test. Results: docs/performance.md.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHES = {                 # name: (script, extra arguments)
    "simulator": ("bench_simulator.py", []),
    "import": ("bench_import.py", []),
    "reader_wait": ("bench_reader_wait.py", []),
    "marks": ("bench_marks.py", []),
    "explorer": ("bench_explorer.py", []),
    "explorer_undated": ("bench_explorer.py", ["--undated"]),
    "cold_start": ("bench_cold_start.py", []),
    "browser": ("bench_browser.py", []),
    "api": ("bench_api.py", []),
    "overview": ("bench_overview.py", []),
}


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{platform.node()}: {cpu}, {os.cpu_count()} CPUs, Python "
            f"{platform.python_version()}, {platform.system()} {platform.release()}")


def run(name: str, cache: Path, out: Path) -> list[dict]:
    script, extra = BENCHES[name]
    cmd = [sys.executable, str(HERE / script), *extra, "--json", str(out)]
    if name in ("marks", "explorer", "explorer_undated"):
        cmd += ["--cache", str(cache)]
    print(f"== {name}: {' '.join(Path(c).name if c == sys.executable else c for c in cmd[1:])}",
          flush=True)
    done = subprocess.run(cmd, cwd=HERE.parent, env=dict(os.environ, STREAMLIT_LOGGER_LEVEL="error"),
                          text=True, capture_output=True)
    print(done.stdout.rstrip(), flush=True)
    if done.returncode != 0 or not out.exists():
        tail = done.stderr.strip().splitlines()[-5:]
        return [{"bench": name, "figure": "(failed)", "value": None, "unit": "", "target": "",
                 "met": False, "detail": " | ".join(tail)}]
    return json.loads(out.read_text())


def table(rows: list[dict]) -> str:
    def value(r: dict) -> str:
        v = r["value"]
        if v is None:
            return "n/a"
        text = f"{v:,.2f}" if abs(v) < 1000 else f"{v:,.0f}"
        return f"{text} {r['unit']}".strip()

    head = ("benchmark", "figure", "value", "target", "met")
    body = [(r["bench"], r["figure"], value(r), r["target"] or "(reported)",
             {True: "yes", False: "NO", None: "–"}[r["met"]]) for r in rows]
    widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(head, widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |" for row in body]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    names = argv[argv.index("--only") + 1].split(",") if "--only" in argv else list(BENCHES)
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        print(f"error: unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(BENCHES)}",
              file=sys.stderr)
        return 2
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="opx-bench-") as tmp:
        cache = Path(tmp) / "databases"
        for name in names:
            rows += run(name, cache, Path(tmp) / f"{name}.json")
    print()
    print(f"opx benchmarks, {dt.datetime.now():%Y-%m-%d %H:%M}, {machine()}")
    print(table(rows))
    print()
    for r in rows:
        if r["detail"]:
            print(f"- {r['bench']}, {r['figure']}: {r['detail']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
