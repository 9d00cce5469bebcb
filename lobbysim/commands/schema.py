"""``lobbysim schema [--out FILE]``: the JSON Schema of scenario files.

The schema (:func:`lobbysim.scenario.schema.scenario_schema`) is generated from the scenario's
model; editors that read JSON Schema (VS Code's YAML extension, any editor with the YAML language
server) use it to complete field names and flag unknown fields, wrong types and values outside a
fixed set. The bundled scenarios name their copy, ``scenario.schema.json`` beside them, in their
first comment block (``# yaml-language-server: $schema=scenario.schema.json``), and ``lobbysim
init`` copies it next to the scenario it writes. Written to FILE as every output file is
(:func:`lobbysim.records.outputs.write_output_file`): never over an existing file unless
``--force``, never
through a link, to a device or into a folder; nothing half-written on an error, which is one line
(exit status 2).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lobbysim.records.outputs import write_output_text
from lobbysim.scenario.schema import schema_text


def add_schema_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``lobbysim schema``."""
    schema = subparsers.add_parser(
        "schema",
        help="print the JSON Schema of scenario files (for editors)",
        description="Print the JSON Schema (draft 2020-12) of scenario files, generated from the "
        "scenario model, to standard output or --out: editors that read JSON Schema complete "
        "field names and flag unknown fields, wrong types and values outside a fixed set. A "
        "scenario names it with the comment '# yaml-language-server: $schema=FILE'. Ranges, "
        "cross-field rules and plug-in parameters are checked by 'lobbysim validate'.",
    )
    schema.add_argument("--out", type=Path, default=None, help="the JSON file to write (new)")
    schema.add_argument(
        "--force", action="store_true", help="replace --out if it is an existing regular file"
    )
    schema.set_defaults(handler=_schema)


def _schema(args: argparse.Namespace) -> int:
    text = schema_text()
    if args.out is None:
        print(text, end="")
        return 0
    write_output_text(args.out, text, force=args.force)  # an OutputTargetError: exit 2 (cli)
    print(f"wrote {args.out}")
    return 0
