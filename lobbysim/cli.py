"""The ``lobbysim`` command: a thin shell over library functions.

``build_parser()`` builds the argument parser and ``main(argv) -> int`` runs one subcommand; every
subcommand is one library call that the tests can also make directly. User errors go to stderr as
one line each with a non-zero exit status and no traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from lobbysim import __version__


class UserError(Exception):
    """A problem with what the user asked for: reported as one line, exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    """Build the ``lobbysim`` argument parser with all its subcommands."""
    parser = argparse.ArgumentParser(
        prog="lobbysim",
        description=(
            "Simulate a matchmaking lobby: queue times, match fairness and rating accuracy "
            "for matchmaking policies compared on the same random numbers."
        ),
    )
    parser.add_argument("--version", action="version", version=f"lobbysim {__version__}")
    parser.add_subparsers(dest="command", metavar="COMMAND")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``lobbysim`` with ``argv`` (default: ``sys.argv[1:]``) and return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        handler = args.handler
        return int(handler(args))
    except UserError as exc:
        print(f"lobbysim: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("lobbysim: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
