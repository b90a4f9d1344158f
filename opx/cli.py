"""`python -m opx ...`: database set-up and run management. Bad input exits non-zero with
`error: <file>: <field or line>: <what is wrong>` and writes nothing."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from opx import store
from opx.config import db_path
from opx.errors import OpxError


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
    _db_arg(init)

    runs = sub.add_parser("runs", help="list or delete stored runs")
    runs_sub = runs.add_subparsers(dest="runs_command", required=True)
    lst = runs_sub.add_parser("list", help="one line per stored run")
    _db_arg(lst)
    delete = runs_sub.add_parser("delete", help="delete a run and its points")
    delete.add_argument("id")
    _db_arg(delete)
    return parser


def cmd_db_init(args) -> int:
    from opx.builtin import builtin_runs
    path = db_path(args.db)
    runs = builtin_runs()           # validate everything before the file is touched
    with store.writing(path) as con:
        result = store.write_runs(con, runs)
        total_runs, total_points = store.count_runs(con)
    print(f"{path}: schema version {store.SCHEMA_VERSION}; built-in data: "
          f"{result.runs_added} run(s) and {result.points_added} point(s) added, "
          f"{result.runs_unchanged} already stored; {total_runs} run(s), {total_points} point(s) in all")
    return 0


def cmd_runs_list(args) -> int:
    path = db_path(args.db)
    with store.reading(path) as con:
        df = store.list_runs(con)
    if df.empty:
        print("no runs stored")
    else:
        print(df.to_string(index=False))
    return 0


def cmd_runs_delete(args) -> int:
    path = db_path(args.db)
    with store.writing(path) as con:
        deleted = store.delete_run(con, args.id)
    if not deleted:
        raise OpxError(path, "id", f"no run with id `{args.id}`")
    print(f"deleted run {args.id}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler = {("db", "init"): cmd_db_init,
               ("runs", "list"): cmd_runs_list,
               ("runs", "delete"): cmd_runs_delete}[
        (args.command, getattr(args, "db_command", None) or getattr(args, "runs_command", None))]
    try:
        return handler(args)
    except OpxError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
