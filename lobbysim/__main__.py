"""``python -m lobbysim``: the ``lobbysim`` command (:func:`lobbysim.cli.main`)."""

import sys

from lobbysim.cli import main

if __name__ == "__main__":
    sys.exit(main())
