"""``python -m shared_core.cli``."""

import sys

from shared_core.cli.commands import main

sys.exit(main())
