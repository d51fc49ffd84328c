"""``python -m tui.cli``: how ``fairtop serve`` starts the app for each browser session, and how
the tests run the command line without an installed console script."""

import sys

from tui.cli.entry import main

if __name__ == "__main__":  # not when a walk over the package imports it (tests/test_import_hygiene.py)
    sys.exit(main())
