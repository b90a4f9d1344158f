"""python -m opx.simulate calibrate [SILICON_CSV]   refit and write data/simulator/calibration.json
python -m opx.simulate validate [SILICON_CSV]    print the leave-one-system-out table
python -m opx.simulate ablations [SILICON_CSV]   the same with one model ingredient removed at a time
python -m opx.simulate spread [FIXTURES_DIR]     refit the P90/P99 spread, write data/simulator/spread.json"""
import json
import sys
from pathlib import Path

from opx.simulate.api import calibrate, validate
from opx.simulate.calibration import ablations


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("calibrate", "validate", "ablations", "spread"):
        print(__doc__.strip())
        return 2
    path = Path(argv[1]) if len(argv) > 1 else None
    try:
        if argv[0] == "calibrate":
            res = calibrate(path)
            print(json.dumps(res.get("validation", {}).get("overall", {}), indent=2))
            print(f"wrote data/simulator/calibration.json (fit {res['fit_date']}, {res['seconds']} s)")
        elif argv[0] == "spread":
            from opx.simulate import spread
            doc = spread.write(fixtures=path)
            for name, e in doc["percentiles"].items():
                if e["status"] == "modelled":
                    print(f"{name}: k = {e['k']:.4f}, held-out MdAPE {e['heldout_mdape']:.1f} % "
                          f"({e['sources']} sources, {e['points']} points)")
                else:
                    print(f"{name}: not modelled: {e['why']}")
            for name, vs in doc["variants"].items():
                for v, d in vs.items():
                    print(f"  {name} {d['text']:<70s} held-out MdAPE {d['mdape']:5.1f} %, "
                          f"median signed {d['median_signed']:+5.1f} %, max {d['max_abs']:5.1f} %")
            print(f"wrote data/simulator/spread.json (fit {doc['fit_date']})")
        elif argv[0] == "ablations":
            print(ablations(path).round(1).T.to_string(header=False))
        else:
            df, overall = validate(path)
            print(df.round(1).to_string(index=False))
            print(json.dumps({k: v for k, v in overall.items() if k != "rows"}, indent=2))
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
