"""python -m opx.simulate ACTION [PATH]: an alias of `python -m opx simulate --ACTION`.

  calibrate [SILICON_CSV]   = python -m opx simulate --calibrate [--silicon SILICON_CSV]
  validate [SILICON_CSV]    = python -m opx simulate --validate [--silicon SILICON_CSV]
  ablations [SILICON_CSV]   = python -m opx simulate --ablations [--silicon SILICON_CSV]
  spread [FIXTURES_DIR]     = python -m opx simulate --spread [--fixtures FIXTURES_DIR]
  shape                     = python -m opx simulate --shape

The alias runs that command in this process's place (os.execv), so the simulator's package never
imports the CLI, which sits above it."""
import os
import sys

ACTIONS = ("calibrate", "validate", "ablations", "spread", "shape")


def cli_args(argv: list[str]) -> list[str] | None:
    """The `python -m opx` arguments this alias stands for, or None when argv is not one."""
    if not argv or argv[0] not in ACTIONS or len(argv) > (1 if argv[0] == "shape" else 2):
        return None
    args = ["simulate", f"--{argv[0]}"]
    if len(argv) == 2:
        args += ["--fixtures" if argv[0] == "spread" else "--silicon", argv[1]]
    return args


def main(argv: list[str]) -> int:
    args = cli_args(argv)
    if args is None:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", "opx", *args])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
