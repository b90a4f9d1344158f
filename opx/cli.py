"""`python -m opx ...`: database set-up and run management. Bad input exits non-zero with
`error: <file>: <field or line>: <what is wrong>` and writes nothing."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from opx import store
from opx.config import MEASURED_DIR, db_path
from opx.errors import BadParameter, OpxError, OutputError, printable, shown


def _db_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", metavar="PATH",
                   help="DuckDB file (default: $OPX_DB or data/opx.duckdb)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m opx",
                                     description="opx, the operating-point explorer")
    sub = parser.add_subparsers(dest="command", required=True)

    db = sub.add_parser("db", help="create or upgrade the database")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    init = db_sub.add_parser("init", help="apply migrations and load the built-in data")
    init.add_argument("--no-simulated", action="store_true",
                      help="skip the built-in simulated envelopes (published figures only)")
    init.add_argument("--no-measured", action="store_true",
                      help="leave out the built-in InferenceX measurements (data/measured/)")
    _db_arg(init)

    ingest = sub.add_parser("ingest", help="import result files and folders (recursively)")
    ingest.add_argument("paths", nargs="+", metavar="PATH")
    from opx.ingest.core import OPTION_HELP
    for name, what in OPTION_HELP.items():
        kind = ({"type": _positive_int} if name == "gpus" else
                {"action": "append", "default": [], "metavar": "KEY=VALUE"} if name == "meta"
                else {})
        ingest.add_argument(f"--{name}", help=what, **kind)
    ingest.add_argument("--dry-run", action="store_true", help="validate and write nothing")
    ingest.add_argument("--jobs", type=_positive_int, default=None, metavar="N",
                        help="processes parsing files (default: one per CPU, up to 8, from 400 "
                             "files on; 1 parses in this process)")
    _db_arg(ingest)

    exp = sub.add_parser("export", help="write what a link shows as a chart or data file")
    exp.add_argument("link", metavar="LINK", help="a share link, or its path and query "
                                                 "(e.g. '/compare?a=vr-nvl72&b=gb300-nvl72')")
    exp.add_argument("--format", required=True,
                     choices=("png", "svg", "pdf", "html", "csv", "json", "vl.json", "parquet",
                              "brief-pdf", "brief-html"))
    exp.add_argument("-o", "--output", required=True, metavar="FILE")
    _db_arg(exp)

    sim = sub.add_parser("simulate", help="project curves with the calibrated serving model")
    sim.add_argument("--hardware", help="hardware slug or spelling")
    sim.add_argument("--model", help="model slug or spelling")
    sim.add_argument("--workload", help="workload slug")
    sim.add_argument("--gpus", type=_positive_int, help="GPU budget (default: one system)")
    how = sim.add_mutually_exclusive_group()
    how.add_argument("--search", action="store_true",
                     help="sweep layouts, P:D splits and MTP settings (the default)")
    how.add_argument("--layout", help='one layout, e.g. "TP8", "DEP16", "disagg 2xDEP4+1xDEP32"')
    sim.add_argument("--mtp-depth", type=int, default=0, help="MTP draft depth (search: up to it)")
    sim.add_argument("--mtp-acceptance", type=float, default=0.8, help="per-draft acceptance")
    sim.add_argument("--prefix-hit-rate", type=float, help="default: the workload's")
    sim.add_argument("--precision", choices=("fp4", "fp8", "bf16"))
    sim.add_argument("--kv-offload", choices=("none", "pool"), default="none")
    sim.add_argument("--framework", choices=("trtllm", "sglang", "vllm"),
                     help="calibration factors of this serving framework (default: pooled)")
    sim.add_argument("--fp4-pflops", type=float, help="override dense FP4 PFLOPS per GPU")
    sim.add_argument("--hbm-tb-s", type=float, help="override HBM bandwidth per GPU")
    sim.add_argument("--anchor", action="append", metavar="RUN_ID", default=[],
                     help="anchor the projection to this run's points (repeatable; measured, "
                          "published, preview or derived runs of the same hardware, model and "
                          "workload): fits the overhead, memory, compute and spread multipliers "
                          "and gives a band")
    sim.add_argument("--save", action="store_true", help="store each layout's curve as a run")
    sim.add_argument("--format", choices=("table", "json"), default="table")
    sim.add_argument("--validate", action="store_true",
                     help="leave-one-system-out validation on the calibration data")
    sim.add_argument("--calibrate", action="store_true",
                     help="refit the efficiency factors, write data/simulator/calibration.json and "
                          "print the validation it stores")
    sim.add_argument("--ablations", action="store_true",
                     help="the validation once per ablation variant (one model ingredient removed "
                          "or replaced at a time; minutes)")
    sim.add_argument("--spread", action="store_true",
                     help="refit the P90 spread model, write data/simulator/spread.json and print "
                          "every variant's held-out error")
    sim.add_argument("--shape", action="store_true",
                     help="refit the shape anchored curves follow between their anchors on the "
                          "measured curves in data/measured/, write data/simulator/shape.json and "
                          "print its leave-one-model-out error")
    sim.add_argument("--silicon", metavar="CSV", help="calibration data (default: AIConfigurator's "
                                                      "silicon_sample.csv in ../shared/fixtures)")
    sim.add_argument("--fixtures", metavar="DIR", help="result files the spread is fitted on "
                                                       "(default: ../shared/fixtures)")
    _db_arg(sim)

    exp_pq = db_sub.add_parser("export-parquet", help="write runs and points as a Parquet dataset")
    exp_pq.add_argument("dir", metavar="DIR")
    _db_arg(exp_pq)

    copy = db_sub.add_parser("copy", help="fill an empty PostgreSQL store (--db) with another "
                                          "store's data (a DuckDB file, a Parquet dataset)")
    copy.add_argument("source", metavar="SOURCE", help="the store to copy from")
    _db_arg(copy)

    serve = sub.add_parser("serve", help="serve the dashboard, the JSON API (/api/v1) and the MCP "
                                         "server (/mcp) on one port",
                           description="The dashboard, /api/v1 and /mcp on one port (Streamlit's "
                                       "ASGI app on uvicorn). Settings: OPX_DB, OPX_READ_ONLY, "
                                       "OPX_ADMIN_TOKEN, OPX_BASE_URL (docs/api.md).")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default "
                                                           "127.0.0.1; 0.0.0.0 for every one)")
    serve.add_argument("--port", type=_port, default=8501, help="port (default 8501)")
    _db_arg(serve)
    mcp = sub.add_parser("mcp", help="the MCP server on stdin/stdout, for an agent that starts "
                                     "it (read-only tools)")
    _db_arg(mcp)

    runs = sub.add_parser("runs", help="list, show or delete stored runs")
    runs_sub = runs.add_subparsers(dest="runs_command", required=True)
    lst = runs_sub.add_parser(
        "list", help="one line per stored run (newest import first)",
        description="One line per stored run, newest import first. Filters are repeatable: a run "
                    "is listed when it matches one value of every filter given.")
    lst.add_argument("--format", choices=("table", "json", "csv"), default="table",
                     help="table (fits 120 columns), json (a list of runs, canonical fields) or "
                          "csv (the same fields, with a header)")
    from opx.answers.runs import RUN_FILTERS
    for flag, what, repeatable in RUN_FILTERS:
        choices = {"mode": ("agg", "disagg"), "mtp": ("on", "off")}.get(flag)
        lst.add_argument(f"--{flag}", action="append" if repeatable else "store",
                         default=[] if repeatable else None, choices=choices,
                         metavar=(flag[0].upper() if repeatable else
                                  "YYYY-MM-DD" if flag in ("since", "until") else None),
                         help=f"{what}; repeatable" if repeatable else what)
    _db_arg(lst)
    show = runs_sub.add_parser("show", help="one run and its points")
    show.add_argument("id", metavar="ID")
    show.add_argument("--format", choices=("table", "json", "csv"), default="table",
                      help="table (fields, then points), json (the run with a `points` list) or "
                           "csv (the points)")
    _db_arg(show)
    delete = runs_sub.add_parser("delete", help="delete a run and its points")
    delete.add_argument("id", metavar="ID")
    _db_arg(delete)
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value}")
    return value


def _port(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (1-65535)")
    return int(text)


def _meta(pairs: list[str]) -> dict[str, str]:
    from opx.ingest.core import parse_meta
    try:
        return parse_meta(pairs)
    except ValueError as exc:
        raise OpxError("--meta", str(exc), "expected KEY=VALUE") from None


def _progress(done: int, total: int, path: Path) -> None:
    """A progress bar on stderr for many files (a line per 10% when stderr is not a terminal)."""
    if total < 20:
        return
    width = 30
    filled = int(width * done / total)
    bar = f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} files"
    if sys.stderr.isatty():
        print(f"\r{bar}", end="" if done < total else "\n", file=sys.stderr, flush=True)
    elif done == total or done % max(1, total // 10) == 0:
        print(bar, file=sys.stderr, flush=True)


def cmd_ingest(args) -> int:
    from opx.catalog import load_catalog
    from opx.store.importer import changed_data, import_files
    from opx.ingest.core import IngestOptions
    options = IngestOptions(format=args.format, hardware=args.hardware, model=args.model,
                            framework=args.framework, precision=args.precision,
                            workload=args.workload, gpus=args.gpus, meta=_meta(args.meta))
    path = db_path(args.db)
    store.check(path)       # a database that cannot be opened fails before any file is parsed
    results = import_files(args.paths, options, path, load_catalog(), dry_run=args.dry_run,
                           progress=_progress, workers=args.jobs)
    rows = []
    for r in results:
        # Names and values from files are printed escaped (opx.errors.shown / printable).
        outcome = (f"{r.runs_added} run(s), {r.points_added} point(s) "
                   f"{'would be ' if args.dry_run else ''}added" if r.ok
                   else "error: " + printable(r.error).removeprefix(f"{shown(r.path)}: "))
        rows.append((shown(r.path), printable(r.format or "-"), outcome))
    widths = [max(len(x[i]) for x in rows + [("file", "format", "result")]) for i in range(3)]
    print("  ".join(h.ljust(w) for h, w in zip(("file", "format", "result"), widths)))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    for r in results:
        for notice in r.notices:
            print(f"note: {shown(r.path)}: {printable(notice)}")
    failed = [r for r in results if not r.ok]
    for r in failed:
        print(f"error: {printable(r.error)}", file=sys.stderr)
    stopped_by = dict.fromkeys(r.store_error for r in failed if r.store_error)
    for exc in stopped_by:          # the database's error, once
        print(f"error: {printable(exc)}", file=sys.stderr)
    good = len(results) - len(failed)
    not_stored = sum(r.store_error is not None for r in results)
    if changed_data(results, args.dry_run):
        _precompute(path)
    print(f"{good} file(s) imported{' (dry run: nothing written)' if args.dry_run else ''}, "
          f"{len(failed) - not_stored} refused"
          f"{f', {not_stored} not stored (the database could not be written)' if not_stored else ''}"
          f"; database {store.name(path)}")
    return 1 if failed else 0


class _ArgError(OpxError):
    """A bad command-line value: `error: <argument>: <what is wrong>`."""

    def __init__(self, arg: str, problem: str):
        self.file, self.field, self.problem = str(arg), "", problem
        Exception.__init__(self, f"{arg}: {problem}")


def _quiet(con) -> None:
    # DuckDB draws a progress bar on stdout for a slow query: it would break JSON and CSV output
    con.execute("SET enable_progress_bar = false")


def _run_filters(args, con):
    """The `runs list` filters (opx.answers.runs); a bad one is `error: --<flag>: ...`."""
    from opx.answers.runs import FILTER_NAMES, run_filters
    from opx.catalog import load_catalog
    given = {}
    for name in FILTER_NAMES:
        value = getattr(args, name, None)
        if value:
            given[name] = [str(v) for v in value] if isinstance(value, list) else [str(value)]
    try:
        return run_filters(con, load_catalog(), given)
    except BadParameter as exc:
        raise _ArgError(f"--{exc.param}", exc.problem) from None


def cmd_runs_show(args) -> int:
    from opx.store import queries
    from opx.publish import runs_output as out
    path = db_path(args.db)
    with store.reading(path) as con:
        _quiet(con)
        table = args.format == "table"
        run = queries.run_fields(con, args.id, text_limit=out.SHOW_VALUE_WIDTH if table else None)
        if run is None:
            raise _ArgError(args.id, "no run with this id")
        if table:
            present = queries.run_points_present(con, args.id)
            out.print_run_table(run, lambda: queries.run_points(
                con, args.id, present, text_limit=out.SHOW_TEXT_WIDTH), present, sys.stdout)
            return 0
        names = queries.run_point_columns()
        points = out.batches(queries.run_points(con, args.id, names))
        if args.format == "json":
            run.pop("points")           # the count; the list of points takes its place
            out.write_run_json(run, names, points, sys.stdout)
        else:
            out.write_csv(sys.stdout, names, points)
    return 0


def cmd_export(args) -> int:
    from opx.publish import output
    from opx.publish.document import document
    from opx.catalog import load_catalog
    output.check_target(args.output)        # a bad -o fails before any work
    doc = document(args.link, args.format, db_path(args.db), load_catalog())
    for notice in doc.notices:
        print(f"note: LINK: {printable(notice)}", file=sys.stderr)
    out = output.write_file(args.output, doc.data)    # atomic; a failed export leaves nothing behind
    print(f"{shown(out)}: {args.format}, {len(doc.data):,} bytes")
    return 0


def _simulate_calibration(args) -> int:
    """--calibrate / --validate / --ablations: the fit and its leave-one-system-out validation."""
    import json
    import pandas as pd
    from opx.simulate import api, ttft_sources
    from opx.simulate.calibration import ablations
    silicon = Path(args.silicon) if args.silicon else None
    try:
        if args.ablations:
            table = ablations(silicon)
        elif args.calibrate:
            result = api.calibrate(silicon)
            print(f"wrote data/simulator/calibration.json (fit {result.get('fit_date')})")
            stored = result["validation"]          # calibrate() validates: not run twice
            table = pd.DataFrame(stored["per_system"])
            overall = {**stored["overall"], "rows": result["rows"]}
        else:
            table, overall = api.validate(silicon)
    except FileNotFoundError as exc:
        raise OpxError(args.silicon or "silicon_sample.csv", "file", str(exc)) from None
    if args.ablations:
        if args.format == "json":
            print(table.to_json(orient="records", indent=2))
        else:
            print(table.round(1).T.to_string(header=False))
    elif args.format == "json":
        doc = {"systems": json.loads(table.to_json(orient="records")), "overall": overall}
        if args.validate and not args.calibrate:
            doc["anchoring"] = _anchoring_validation(args, silicon)
            doc["repeat_spread"] = _repeat_floor(args)[0]
        _print_json(doc)
        return 0
    else:
        print("leave-one-system-out: median absolute percentage error on each held-out system")
        print(table.round(1).to_string(index=False))
        print("overall: " + ", ".join(f"{k} {v:.1f}%" if isinstance(v, float) else f"{k} {v}"
                                      for k, v in overall.items() if k not in ("rows", "ttft_sources")))
        if "ttft_sources" in overall:
            print("\nwhere the held-out TTFT error comes from")
            print("\n".join(ttft_sources.summary_text(overall["ttft_sources"])))
    if args.validate and not args.calibrate:
        _anchoring_validation(args, silicon)
        print(f"\nrepeated runs in the database: {_repeat_floor(args)[1]}")
    return 0


def _repeat_floor(args) -> tuple[dict, str]:
    """The spread of the repeat sets in the database's measured data, beside the model's error
    (docs/simulator.md, "The floor: repeated runs")."""
    from opx.store import repeats
    with store.reading(db_path(args.db)) as con:
        summary = repeats.spread_summary(con)
    return summary, repeats.spread_text(summary)


def _anchoring_validation(args, silicon) -> dict:
    """--validate, second part: leave points out of anchored projections, beside log-log
    interpolation (opx/simulate/anchor_validation.py); stores data/simulator/anchoring.json."""
    import pandas as pd
    from opx.simulate import anchor_validation
    result = anchor_validation.validate(silicon)
    path = anchor_validation.write(result, silicon_csv=silicon)
    print(f"wrote {shown(path.relative_to(path.parents[2]))}", file=sys.stderr)
    if args.format == "json":
        return result
    from opx.simulate import shape
    o = result["overall"]
    print("\nanchored projections, leave points out: two anchors per measured envelope (highest "
          "throughput, highest interactivity), median APE of throughput at the held-out points' "
          "interactivity")
    print(pd.DataFrame(result["per_system_model"]).to_string(index=False))

    def line(name: str, d: dict) -> str:
        if not d.get("envelopes"):
            return f"{name}: no envelope"
        return (f"{name}: anchored {d['anchored_mdape']:.1f}%, log-log {d['loglog_mdape']:.1f}% on "
                f"{d['held_out_points']} held-out points of {d['envelopes']} envelopes; worse than "
                f"log-log on {d['worse_than_loglog_pct']:.1f}% of them; band covers "
                f"{d['band_coverage_pct']}% (stated {o['stated_band_coverage_pct']}%)")
    print("each envelope left out (the shape of its model's other envelopes where opx has them):")
    unseen = o["model_unseen"]
    for name, d in (("all", o), (f"steep (falls {o['steep_fall']:g}x or more)", o["steep"]),
                    ("disaggregated", o["disaggregated"])):
        print("  " + line(name, d))
    print("each model left out (the shapes learned from the other models: a model opx has no "
          "envelope of):")
    for name, u in (("all", unseen), (f"steep (falls {o['steep_fall']:g}x or more)",
                                      unseen["steep"]), ("disaggregated", unseen["disaggregated"])):
        print("  " + line(name, u))
    print("by the shape drawn (the figure each page quotes under a curve that follows it):")
    by = o.get("by_shape", {})
    for kind, name in (("model", "the model's own"), ("disaggregated", "the disaggregated "
                       "envelopes'"), ("all", "the one for all models, as for a model opx has "
                       "no envelope of")):
        if kind in by:
            print("  " + line(name, by[kind]))
    one = o["one_anchor"]
    print(f"one anchor ({one['anchor']}): {one['mdape']}% on {one['points']} points"
          + (f"; its band ({one['band']}) covers {one['band_coverage_pct']}% of the "
             f"{one['band_points']} the projection reaches" if one.get("band_points") else ""))
    print(f"target: {o['target']}: " + ", ".join(
        f"{k} {'met' if v else 'not met'}" for k, v in o["meets"].items()))
    print("unanchored, leave one model out (models the calibration does not hold): " + ", ".join(
        f"{m} {v['mdape']:.1f}% ({v['points']} points)"
        for m, v in o["unanchored_leave_one_model_out"].items()))
    held = shape.stored_validation()
    if held:
        print("\nthe learned shape alone on every measured run and envelope in data/measured/ "
              "(python -m opx simulate --shape):")
        print(shape_table(held))
    return result


def _simulate_spread(args) -> int:
    """--spread: refit the spread model on the fixtures and write data/simulator/spread.json."""
    from opx.simulate import spread
    try:
        doc = spread.write(fixtures=Path(args.fixtures) if args.fixtures else None)
    except FileNotFoundError as exc:
        raise OpxError(args.fixtures or "../shared/fixtures", "folder", str(exc)) from None
    if args.format == "json":
        _print_json(doc)
        return 0
    for name, e in doc["percentiles"].items():
        if e["status"] == "modelled":
            print(f"{name}: k = {e['k']:.4f}, held-out MdAPE {e['heldout_mdape']:.1f} % "
                  f"({e['sources']} sources, {e['points']} points)")
        else:
            print(f"{name}: not modelled: {e['why']}")
    for name, variants in doc["variants"].items():
        for d in variants.values():
            print(f"  {name} {d['text']:<70s} held-out MdAPE {d['mdape']:5.1f} %, "
                  f"median signed {d['median_signed']:+5.1f} %, max {d['max_abs']:5.1f} %")
    print(f"wrote data/simulator/spread.json (fit {doc['fit_date']})")
    return 0


def _simulate_shape(args) -> int:
    """--shape: refit the learned shape on the measured curves and write data/simulator/shape.json."""
    import json
    from opx.simulate import shape
    curves = shape.measured_curves()
    fitted = shape.fit(curves)
    held = shape.held_out(curves)
    doc = json.loads(shape.write(fitted, curves, held).read_text())
    if args.format == "json":
        _print_json(doc)
        return 0
    for name, s in (("shape", fitted.default), ("disaggregated envelopes' shape",
                                               fitted.disaggregated),
                    *((f"{m}'s shape", v.all) for m, v in fitted.by_model.items())):
        if s is not None:
            print(f"{name}: y^{s.y_power:g} linear in x^{s.x_power:g}, band {s.band[0]:+.3f} / "
                  f"{s.band[1]:+.3f} ({s.coverage:.0%} stated), fitted on {s.curves} measured "
                  f"{shape.KINDS[s.kind]}")
    print(shape_table(held))
    print(f"wrote data/simulator/shape.json (fit {doc['fit_date']})")
    return 0


def shape_table(held: dict) -> str:
    """The learned shape's held-out figures as a table (--shape, --validate)."""
    import pandas as pd
    rows = [{"set": name.replace("_own_model", " (model's own shape)").replace("_", ", "), **v}
            for name, v in held.items() if isinstance(v, dict)]
    return (f"{held['method']} (steep: throughput falls {held['steep_fall']:g}x or more)\n"
            + pd.DataFrame(rows).to_string(index=False))


def _print_json(doc) -> None:
    from opx.publish.export import strict_json         # strict: NaN and infinities are null
    print(strict_json(doc))


# The simulator's numeric flags and the Simulate page's fields they set: one range for both
# (models/simulate_view.py), checked before any work.
SIMULATE_RANGES = {"--gpus": ("gpus", "gpus"), "--mtp-depth": ("mtp_depth", "mtp"),
                   "--mtp-acceptance": ("mtp_acceptance", "accept"),
                   "--prefix-hit-rate": ("prefix_hit_rate", "hit"),
                   "--fp4-pflops": ("fp4_pflops", "fp4"), "--hbm-tb-s": ("hbm_tb_s", "hbm")}


def _check_simulate_ranges(args) -> None:
    import math
    from models.simulate_view import widget_range
    from models.view import range_text
    for flag, (attr, field) in SIMULATE_RANGES.items():
        value = getattr(args, attr, None)
        if value is None:
            continue
        low, high = widget_range(field)
        if field == "gpus":
            low = 1              # a budget given on the command line is at least one GPU
        if not math.isfinite(value) or not low <= value <= high:
            raise OpxError(flag, "", f"{value!r} is not a number {range_text(low, high)}")


def cmd_simulate(args) -> int:
    """`simulate`: one system's curves, or the simulator's maintenance actions (--calibrate,
    --validate, --ablations, --spread), which are also `python -m opx.simulate ACTION`."""
    import json
    from opx.simulate import api
    actions = [a for a in ("calibrate", "validate", "ablations", "spread", "shape")
               if getattr(args, a)]
    if len(actions) > 1 and set(actions) != {"calibrate", "validate"}:
        raise OpxError("simulate", ", ".join(f"--{a}" for a in actions),
                       "one action at a time (--calibrate already prints the validation)")
    if args.spread:
        return _simulate_spread(args)
    if args.shape:
        return _simulate_shape(args)
    if actions:
        return _simulate_calibration(args)
    missing = [f"--{k}" for k in ("hardware", "model", "workload") if not getattr(args, k)]
    if missing:
        raise OpxError("simulate", ", ".join(missing),
                       "required (or --validate, --calibrate, --ablations, --spread, --shape)")
    from opx.catalog import load_catalog
    _check_simulate_ranges(args)
    knobs = api.SimKnobs(layout=args.layout, mtp_depth=args.mtp_depth,
                         mtp_acceptance=args.mtp_acceptance, prefix_hit_rate=args.prefix_hit_rate,
                         fp4_dense_pflops=args.fp4_pflops, hbm_tb_s=args.hbm_tb_s,
                         kv_offload=args.kv_offload, precision=args.precision,
                         framework=args.framework)
    catalog = load_catalog()
    fitted = None
    try:
        if args.anchor:
            fitted = _anchored(args, knobs, catalog)
            result = fitted.result
        else:
            result = api.simulate(args.hardware, args.model, args.workload, args.gpus, knobs,
                                  catalog)
    except ValueError as exc:
        raise OpxError("simulate", "request", str(exc)) from None
    env = result.envelope
    if args.format == "json":
        doc = {"hardware": result.hardware, "model": result.model,
               "workload": result.workload, "gpus": result.gpus,
               "engine": api.ENGINE, "engine_version": api.ENGINE_VERSION,
               "parameters": result.parameters, "validation": result.validation,
               "envelope": json.loads(env.to_json(orient="records")),
               "layouts": [c.layout for c in result.curves]}
        if fitted is not None:
            p90 = result.envelope_p90
            doc["envelope_p90"] = json.loads(p90.to_json(orient="records")) if p90 is not None else []
            doc["anchor"] = fitted.summary()
        _print_json(doc)
    else:
        print(f"{result.hardware} · {result.model} · {result.workload} · {result.gpus} GPUs · "
              f"{len(result.curves)} layout curve(s) · {api.ENGINE} {api.ENGINE_VERSION} (simulated)")
        cols = ["layout", "concurrency", "interactivity_p50", "throughput_total_per_gpu",
                "throughput_output_per_gpu", "ttft_p50_s", "tpot_p50_s", "binding"]
        print(env[cols].to_string(index=False, float_format=lambda v: f"{v:,.4g}"))
        if fitted is not None:
            print(_anchor_text(fitted))
        overall = result.validation.get("overall") if isinstance(result.validation, dict) else None
        if overall:
            print("held-out validation: " + ", ".join(
                f"{k} {v:.1f}%" for k, v in overall.items() if isinstance(v, float)))
    if args.save:
        path = db_path(args.db)
        with store.writing(path) as con:
            outcome = store.write_runs(con, result.to_runs())
        print(f"saved: {outcome.runs_added} run(s), {outcome.points_added} point(s) added to {store.name(path)}"
              + (f". {result.saved_note()}" if result.saved_note() else ""),
              file=sys.stderr if args.format == "json" else sys.stdout)
        _precompute(path)
    return 0


def _anchored(args, knobs, catalog):
    """The anchored projection of `simulate --anchor RUN_ID ...`; a run that cannot anchor it
    stops the command with `error: --anchor: <id>: <what is wrong>`."""
    from opx.store import queries
    from opx.simulate import anchor
    from opx.simulate.api import _resolve
    hw = _resolve("hardware", args.hardware, catalog.hardware, catalog.resolve_hardware)
    model = _resolve("model", args.model, catalog.models, catalog.resolve_model)
    workload = _resolve("workload", args.workload, catalog.workloads, catalog.resolve_workload)
    ids = list(dict.fromkeys(args.anchor))
    with store.reading(db_path(args.db)) as con:
        points = queries.anchor_points(con, run_ids=ids)
    for rid, problem in anchor.anchor_run_problems(points, ids, hw, model, workload).items():
        raise OpxError("--anchor", rid, problem)
    return anchor.fit(hw, model, workload, args.gpus, knobs, catalog,
                      anchor.anchors_from_points(points))


def _anchor_text(fitted) -> str:
    lines = ["anchored projection: " + ", ".join(
        f"{name} x{p['multiplier']:.3g}" for name, p in fitted.parameters.items())
        + f" (fit {fitted.seconds:.1f} s; band: {fitted.band_method})"]
    lines += [f"  note: {n}" for n in fitted.notes]
    for r in fitted.residuals:
        state = ("within its uncertainty" if r["within"] else "outside its uncertainty") \
            if r["fitted"] else f"not fitted: {r['reason']}"
        lines.append(f"  {r['label']}: {r['anchor']}: residual {r['residual_pct']:+.1f} % ({state})")
    return "\n".join(lines)


def cmd_db_export_parquet(args) -> int:
    import duckdb
    from opx.store import dataset
    if not args.dir:
        raise OutputError(args.dir, "no folder given")
    path = db_path(args.db)
    with store.reading(path) as con:
        try:
            written = dataset.export(con, Path(args.dir))
        except (OSError, duckdb.Error) as exc:
            if store.storage_error(path, exc, writing=False) is not None:
                raise           # the database itself: `reading` says so
            text = (getattr(exc, "strerror", None) or str(exc)).splitlines()[0]
            raise OutputError(args.dir, f"cannot be written: {text}") from None
        runs, points = store.count_runs(con)
    print(f"{shown(args.dir)}: {runs} run(s), {points} point(s) written as "
          + ", ".join(shown(p.relative_to(args.dir)) for p in written.values()))
    print(f"serve it read-only with: OPX_DB={shown(args.dir)} make run   "
          f"(or --db {shown(args.dir)})")
    return 0


def cmd_db_copy(args) -> int:
    from opx.store import pgstore
    path = db_path(args.db)
    if not pgstore.is_postgres(path):
        raise _ArgError(str(path), "`db copy` writes to a PostgreSQL store (--db postgresql://"
                                   "...); to publish a store as files use `db export-parquet`")
    source = db_path(args.source)
    with store.reading(source) as con:
        counts = pgstore.copy_into(pgstore.url_of(path), con,
                                   say=lambda line: print(line, file=sys.stderr, flush=True))
    print(f"{store.name(path)}: {counts['runs']} run(s), {counts['points']} point(s), "
          f"{counts['saved_views']} saved view(s), {counts['derived_fits']} stored fit(s) "
          f"copied from {store.name(source)}")
    return 0


def cmd_db_init(args) -> int:
    from opx.ingest.builtin import builtin_runs
    from opx.simulate.builtin import builtin_simulations
    path = db_path(args.db)
    store.check(path)               # an unreadable database fails before the built-in data is made
    runs = builtin_runs(measured_dir=None if args.no_measured else MEASURED_DIR)
    # (built before the file is touched: everything is validated first)
    notes: list[str] = []
    if not args.no_simulated:
        simulated, notes = builtin_simulations()
        runs += simulated
    with store.writing(path) as con:
        result = store.write_runs(con, runs)
        total_runs, total_points = store.count_runs(con)
    for note in notes:
        print(f"note: {printable(note)}")
    print(f"{store.name(path)}: schema version {store.schema_version_of(path)}; built-in data: "
          f"{result.runs_added} run(s) and {result.points_added} point(s) added, "
          f"{result.runs_unchanged} already stored; {total_runs} run(s), {total_points} point(s) in all",
          flush=True)
    _precompute(path)
    return 0


def cmd_serve(args) -> int:
    """Replaced by `streamlit run serve.py`, which finds the st.App there (the server's own
    process: Streamlit's settings, signals and logs are its own)."""
    import os
    root = Path(__file__).resolve().parents[1]
    path = db_path(args.db)
    with store.reading(path):       # a database that cannot be read fails before serving
        pass
    os.environ["OPX_DB"] = str(args.db or os.environ.get("OPX_DB") or path)
    argv = [sys.executable, "-m", "streamlit", "run", str(root / "serve.py"),
            "--server.address", args.host, "--server.port", str(args.port),
            "--browser.gatherUsageStats", "false"]
    sys.stdout.flush()
    os.execv(sys.executable, argv)
    return 0                        # not reached


def cmd_mcp(args) -> int:
    import os
    from opx.api import tools
    if args.db:
        os.environ["OPX_DB"] = args.db
    with store.reading(db_path(args.db)):     # one that cannot be read fails before serving
        pass
    tools.run_stdio()
    return 0


def cmd_runs_list(args) -> int:
    from opx.store import queries
    from opx.publish import runs_output as out
    path = db_path(args.db)
    with store.reading(path) as con:
        _quiet(con)
        filters = _run_filters(args, con)
        if args.format == "table":
            if not out.print_runs_table(con, filters, sys.stdout):
                print("no runs match the filters" if any(filters.params().values())
                      else "no runs stored")
            return 0
        rows = out.batches(queries.runs_listing(con, filters))
        if args.format == "json":
            out.write_json_list(sys.stdout, queries.RUN_LIST_FIELDS, rows)
            sys.stdout.write("\n")
        else:
            out.write_csv(sys.stdout, queries.RUN_LIST_FIELDS, rows)
    return 0


def cmd_runs_delete(args) -> int:
    path = db_path(args.db)
    with store.writing(path) as con:
        deleted = store.delete_run(con, args.id)
    if not deleted:
        raise _ArgError(args.id, "no run with this id")
    print(f"deleted run {args.id}")
    _precompute(path)
    return 0


def _precompute(path: Path) -> None:
    """The work that depends only on the data, done now that it changed (opx.answers.precompute), with
    a line on stderr per step."""
    from opx.answers import precompute
    precompute.refresh(path, say=lambda line: print(line, file=sys.stderr, flush=True))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler = {("db", "init"): cmd_db_init,
               ("db", "export-parquet"): cmd_db_export_parquet,
               ("db", "copy"): cmd_db_copy,
               ("ingest", None): cmd_ingest,
               ("export", None): cmd_export,
               ("simulate", None): cmd_simulate,
               ("serve", None): cmd_serve,
               ("mcp", None): cmd_mcp,
               ("runs", "list"): cmd_runs_list,
               ("runs", "show"): cmd_runs_show,
               ("runs", "delete"): cmd_runs_delete}[
        (args.command, getattr(args, "db_command", None) or getattr(args, "runs_command", None))]
    try:
        from opx.settings import check
        from opx.store import pgstore
        check()                     # a setting opx cannot read stops every command
        pgstore.keep_local_copies()     # on PostgreSQL: start from the last command's copy
        return handler(args)
    except OpxError as exc:
        print(f"error: {printable(exc)}", file=sys.stderr)
        return 1
    finally:
        if "opx.answers.anchoring" in sys.modules:     # a fit made by this command is stored before exit
            sys.modules["opx.answers.anchoring"].wait_for_saves()


if __name__ == "__main__":
    sys.exit(main())
