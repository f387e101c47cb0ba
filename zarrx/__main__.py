"""``python -m zarrx`` runs the command line."""

import sys

from zarrx.cli.main import main

sys.exit(main())
