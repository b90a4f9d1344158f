import sys

from opx.cli import main

sys.exit(main())
