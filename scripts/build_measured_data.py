"""Regenerate data/measured/inferencex-silicon.csv.gz from AIConfigurator's silicon_sample.csv.

    python scripts/build_measured_data.py PATH/TO/silicon_sample.csv

The original ships with aiconfigurator-core 0.12.0 (Apache-2.0) at
aiconfigurator_core/systems/silicon_sample.csv; its rows come from the InferenceX database dump of
2026-04-27. The copy keeps every row and every column opx reads, in the file's own format, so the
same importer (opx/ingest/aiconfigurator.py) reads both; it drops the batch-size columns (a load
level opx takes from `silicon_concurrency`) and is gzip-compressed without a timestamp, so the
same input always gives the same bytes. data/measured/NOTICE names the source and its licence.
"""
from __future__ import annotations

import argparse
import csv
import gzip
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from opx.ingest.aiconfigurator import SILICON_COLUMNS  # noqa: E402

OUT = ROOT / "data" / "measured" / "inferencex-silicon.csv.gz"
EXPECTED_ROWS = 5221


def compact(source: Path) -> tuple[bytes, int]:
    """The compact CSV's gzip bytes and its row count."""
    with source.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        header = reader.fieldnames or []
        missing = [c for c in SILICON_COLUMNS if c not in header]
        if missing:
            raise SystemExit(f"error: {source}: header: missing column(s) {', '.join(missing)}")
        kept = [c for c in header if not c.endswith("batch_size")]
        text = io.StringIO()
        writer = csv.DictWriter(text, kept, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        rows = 0
        for row in reader:
            writer.writerow(row)
            rows += 1
    return gzip.compress(text.getvalue().encode("utf-8"), compresslevel=9, mtime=0), rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="AIConfigurator's silicon_sample.csv")
    parser.add_argument("-o", "--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    data, rows = compact(args.source)
    if rows != EXPECTED_ROWS:
        print(f"note: {args.source}: {rows} rows, not the {EXPECTED_ROWS} of aiconfigurator-core "
              f"0.12.0; update data/measured/NOTICE", file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    print(f"{args.out}: {rows} rows, {len(data):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
