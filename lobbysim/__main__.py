"""``python -m lobbysim``: the ``lobbysim`` command (:func:`lobbysim.cli.main.main`)."""

import sys

from lobbysim.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
