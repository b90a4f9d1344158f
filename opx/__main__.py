import os
import sys

from opx.cli import main

try:
    code = main()
    sys.stdout.flush()
except BrokenPipeError:
    # The reader went away (`python -m opx runs list | head`): not an error of ours. Python would
    # print a traceback while flushing at exit; point stdout at nothing first (Python's docs' way).
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    code = 141          # what a shell reports for a command ended by SIGPIPE (128 + 13)
sys.exit(code)
