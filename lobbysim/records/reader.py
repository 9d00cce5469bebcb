"""Record files read back: typed as the run kept them in memory, verified against the manifest.

:func:`read_records` reads a folder of record files (:mod:`lobbysim.records.files`), CSV or
Parquet, back as frames with the schema's dtypes (:data:`lobbysim.records.rows.RECORD_COLUMNS`), so
a
frame read from a file equals the frame the run kept in memory, dtypes included, and every float
is read back exactly as written. It checks every file against the folder's manifest
(``manifest.json``, :mod:`lobbysim.records.outputs`) and refuses, naming the file and where
possible the
line (:class:`~lobbysim.records.files.RecordFileError`), a file cut short or changed, a CSV file
whose last row has no line end (cut mid-row) or that is not UTF-8, and, read for
:func:`lobbysim.load_run` (``complete=True``), a missing value in a column that every record has
(:data:`~lobbysim.records.files.REQUIRED_COLUMNS`); a folder without a manifest (written before
manifests) gets the checks that need none.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from lobbysim.records.files import (
    FORMATS,
    REQUIRED_COLUMNS,
    RecordFileError,
    record_path,
    require_format,
    with_dtypes,
)
from lobbysim.records.outputs import OutputFileError, decode_problem, read_manifest, verify_file
from lobbysim.records.rows import (
    ALL_RECORD_COLUMNS,
    ATTRIBUTE_PREFIX,
    RECORD_COLUMNS,
    RULE_COLUMNS,
)

# pandas 3.1 reads every float exactly (and deprecates the option); before it, only the
# round-trip parser does (pandas 2.1's default one may be off in the last digit)
_PANDAS = tuple(int(part) for part in pd.__version__.split(".")[:2])
_EXACT_FLOATS: dict[str, Any] = {} if _PANDAS >= (3, 1) else {"float_precision": "round_trip"}


def read_records(
    folder: str | Path,
    kinds: Iterable[str] | None = None,
    *,
    columns: Mapping[str, Sequence[str]] | None = None,
    fmt: str | None = None,
    complete: bool = False,
) -> dict[str, pd.DataFrame]:
    """Read a run's record files back as frames with the schema's dtypes, by kind.

    Args:
        folder: the folder of the files (a run folder's ``records/<policy>/``, or where
            ``records.stream`` wrote them).
        kinds: the kinds to read (default: every kind of the schema); a kind without a file is
            left out of the result.
        columns: per kind, only these columns (in the schema's order); default: all the file
            has (:data:`~lobbysim.records.rows.RECORD_COLUMNS`' and, of a run with a world or
            parties, their columns: :func:`lobbysim.records.rows.record_schema`).
        fmt: ``csv`` or ``parquet``; default: whichever file of the kind is there (CSV first).
        complete: also refuse a missing value in a column that every record lobbysim writes
            fills in (:data:`REQUIRED_COLUMNS`), as :func:`lobbysim.load_run` does.

    Raises:
        KeyError: a kind or column the schema does not have, or a world's or parties' column
            of a run without them.
        RecordFileError: a file that is cut short or changed since it was written (against the
            folder's manifest), a CSV file that ends mid-row or is not UTF-8, a file that does
            not read as its kind's records, or with ``complete`` a missing value in a column
            that always has one; the message names the file, and the line where it can.
    """
    manifest = read_manifest(Path(folder))
    out = {}
    for kind in RECORD_COLUMNS if kinds is None else kinds:
        schema = ALL_RECORD_COLUMNS[kind]
        wanted = None if columns is None or kind not in columns else set(columns[kind])
        unknown = set() if wanted is None else {c for c in wanted - schema.keys() if not _attr(c)}
        if unknown:
            raise KeyError(f"{kind} records have no column {sorted(unknown)[0]!r}")
        formats = FORMATS if fmt is None else (fmt,)
        path = next(
            (p for p in (record_path(folder, kind, f) for f in formats) if p.exists()), None
        )
        if path is None:
            continue
        try:
            verify_file(path, manifest)
        except OutputFileError as exc:
            raise RecordFileError(str(exc)) from None
        present = _file_columns(path)
        base = RECORD_COLUMNS[kind]
        absent = sorted(c for c in wanted or () if c not in base and c not in present)
        if absent:
            raise KeyError(
                f"{path}: {kind} records have no column {absent[0]!r} (only those of a run "
                "with a world or parties do)"
            )
        names = [
            c for c in schema if (c in base or c in present) and (wanted is None or c in wanted)
        ]
        # a run under a rule set: its attribute columns (after the parties', before the rules')
        attrs = [c for c in present if _attr(c) and (wanted is None or c in wanted)]
        if attrs:
            rules = RULE_COLUMNS.get(kind, {})
            at = next((k for k, c in enumerate(names) if c in rules), len(names))
            names[at:at] = attrs
        frame = _read_file(path, kind, names)
        entry = (manifest or {}).get(path.name)
        if entry is not None and entry.get("rows") is not None and len(frame) != entry["rows"]:
            raise RecordFileError(
                f"{path}: {len(frame)} rows, {entry['rows']} when written (manifest.json): "
                "the file was changed"
            )
        required = [c for c in REQUIRED_COLUMNS[kind] if c in names] if complete else []
        missing = frame[required].isna().any(axis=1).to_numpy() if required else None
        if missing is not None and missing.any():
            row = int(missing.argmax())
            column = next(c for c in required if pd.isna(frame[c].iat[row]))
            where = f"line {row + 2}" if path.suffix == ".csv" else f"row {row + 1}"
            raise RecordFileError(
                f"{path}: {where} has no {column}, which every {kind} record has: the file is "
                "damaged"
            )
        out[kind] = frame[names]
    return out


def _file_columns(path: Path) -> list[str]:
    """Return the names of the columns of a record file, in its order (none if they cannot be
    read: reading the file then says why)."""
    try:
        if path.suffix == ".csv":
            with open(path, encoding="utf-8", newline="") as fh:
                return list(next(csv.reader(fh), []))
        require_format("parquet")
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    except (OSError, ValueError):  # UnicodeDecodeError is a ValueError
        return []


def _attr(column: str) -> bool:
    """Whether ``column`` is an attribute column of a run under a rule set (``attr_<name>``)."""
    return column.startswith(ATTRIBUTE_PREFIX)


def _read_file(path: Path, kind: str, names: list[str]) -> pd.DataFrame:
    """Read one record file with the schema's dtypes; an unreadable one is a
    :class:`RecordFileError` naming it (and, for CSV, the line where it can)."""
    schema = ALL_RECORD_COLUMNS[kind]
    if path.suffix != ".csv":
        require_format("parquet")
        try:
            return with_dtypes(kind, pd.read_parquet(path, columns=names, engine="pyarrow"))
        except (OSError, ValueError) as exc:  # pyarrow's errors are either
            raise RecordFileError(
                f"{path}: cannot be read as {kind} records ({' '.join(str(exc).split())})"
            ) from None
    try:
        return pd.read_csv(
            path,
            usecols=names,
            # an attribute column's dtype is read from its values (float64 or text)
            dtype={c: schema[c] for c in names if c in schema},
            keep_default_na=False,  # only the empty field is missing, and not in text
            na_values={c: [""] for c in names if c in schema and schema[c] != "str"},
            **_EXACT_FLOATS,  # every float exactly as written
        )
    except UnicodeDecodeError as exc:
        raise RecordFileError(str(decode_problem(path, exc))) from None
    except (ValueError, TypeError) as exc:  # a field that is not of its column's type
        line = _bad_line(path, kind)
        where = f"line {line}: " if line is not None else ""
        raise RecordFileError(
            f"{path}: {where}cannot be read as {kind} records ({' '.join(str(exc).split())})"
        ) from None


def _bad_line(path: Path, kind: str) -> int | None:
    """Return the first line of a CSV record file whose fields do not fit its kind's columns
    (their number, an empty field where one is required, a number that is not one), or None."""
    schema = ALL_RECORD_COLUMNS[kind]
    required = set(REQUIRED_COLUMNS[kind])
    parse = {"int64": int, "Int64": int, "float64": float}
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            return None
        for row in reader:
            if len(row) != len(header):
                return reader.line_num
            for column, value in zip(header, row, strict=True):
                dtype = schema.get(column)
                if dtype is None:
                    continue
                if value == "":
                    if column in required:
                        return reader.line_num
                    continue
                try:
                    if dtype in parse:
                        parse[dtype](value)
                    elif dtype in ("bool", "boolean") and value not in ("True", "False"):
                        return reader.line_num
                except ValueError:
                    return reader.line_num
    return None
