"""The record files of a run: CSV by default or Parquet, written whole or streamed, read back typed.

The format is the scenario's ``records.format``: ``csv`` (the default) or ``parquet``, also set by
``--records-format {csv,parquet}`` of ``lobbysim run``, ``compare`` and ``sweep``. It applies to
the frames of a run kept in memory and written at its end (:func:`write_frames`, a run folder's
``records/<policy>/``) and to records streamed to disk as the run goes (``records.stream``: the
sinks :class:`CsvSink` and :class:`ParquetSink`). Each record kind is one file, ``<kind>.csv`` or
``<kind>.parquet``. Parquet needs pyarrow: ``pip install 'lobbysim[parquet]'``; without it, a
scenario asking for Parquet stops before anything runs (:func:`format_problem`).

Every kind has one schema, :data:`lobbysim.records.rows.RECORD_COLUMNS` (its columns and their
pandas
dtypes). :func:`record_frame` builds the in-memory frames with it and :func:`read_records` reads
either format back with it, so a frame read from a file equals the frame the run kept in memory,
dtypes included (``winner`` and ``team`` as nullable ``Int64``, ids as ``int64``), and every float
is read back exactly as written.

CSV is written as pandas writes a frame of the schema's dtypes (``DataFrame.to_csv(index=False)``),
byte for byte. Streamed rows are formatted column by column (:func:`csv_text`): ints and bools as
``str`` does, floats as their shortest round-trip ``repr`` as pandas does for ``float64``, a missing
value as the empty field. Text that needs quoting, and values of another type than their column's,
go through the standard library's :mod:`csv` writer instead (:func:`csv_rows` converts the values;
the writer quotes as pandas does, which uses it too). In a running lobby the column formatter
writes a flush slightly faster than the :mod:`csv` writer with the checks that writer needs.

**Verified when read.** A folder of record files holds a manifest (``manifest.json``,
:mod:`lobbysim.records.outputs`) with each file's rows and bytes, written with the files (by a sink
when it
closes, streamed or not; by :func:`write_frames`). :func:`read_records` checks every file against
it and refuses, naming the file and where possible the line (:class:`RecordFileError`), a file cut
short or changed, a CSV file whose last row has no line end (cut mid-row) or that is not UTF-8,
and, read for :func:`lobbysim.load_run` (``complete=True``), a missing value in a column that
every record has (:data:`REQUIRED_COLUMNS`); a folder without a manifest (written before
manifests) gets the checks that need none. A sink's write that fails (a full disk) names the
file.

This module holds the formats: the schema's frames, CSV text, the sinks, whole files written.
Reading them back is :mod:`lobbysim.records.reader`'s
(:func:`~lobbysim.records.reader.read_records`); the sink a run streams through
(:func:`~lobbysim.records.writer.open_sink`: the writer process where it can, else
:func:`inline_sink`) is :mod:`lobbysim.records.writer`'s.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from lobbysim.records.outputs import OutputFileError, remove_manifest, write_manifest
from lobbysim.records.rows import (
    ALL_RECORD_COLUMNS,
    ATTRIBUTE_PREFIX,
    DEFAULT_RECORD_FORMAT,
    RECORD_COLUMNS,
    RECORD_FORMATS,
    column_dtype,
)

FORMATS = RECORD_FORMATS
DEFAULT_FORMAT = DEFAULT_RECORD_FORMAT
PARQUET_INSTALL = "pip install 'lobbysim[parquet]'"

_NONE = type(None)
# The Python types a column of each dtype may hold as they are: its text is then what pandas
# writes for the value; any other value is converted first.
_AS_IS: dict[str, frozenset[type]] = {
    "float64": frozenset({float}),
    "int64": frozenset({int}),
    "Int64": frozenset({int, _NONE}),
    "bool": frozenset({bool}),
    "boolean": frozenset({bool, _NONE}),
    "str": frozenset({str}),
}


#: Per record kind, the columns that always hold a value: a missing one is a damaged file. The
#: ``int64``, ``bool`` and ``str`` columns, and these ``float64`` ones (the others may be NaN:
#: ``waits.left_queue`` of a player still waiting, ``ratings.variance`` of a rater without one).
REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    kind: tuple(
        column
        for column, dtype in columns.items()
        if dtype in ("int64", "bool", "str")
        or column
        in {
            "games": ("start", "end"),
            "participants": ("joined", "left", "minutes", "latency_ms"),
            "waits": ("enqueued", "wait"),
            "ratings": ("time", "rating"),
            "players": ("skill", "mu0", "var0"),
        }.get(kind, ())
    )
    for kind, columns in ALL_RECORD_COLUMNS.items()
}

#: A run's columns of every record kind (:func:`lobbysim.records.rows.record_schema`).
Schema = Mapping[str, Mapping[str, str]]


class RecordFileError(OutputFileError):
    """A record file is cut short, changed or unreadable; the message names it (and the line)."""


def _missing(value: Any) -> bool:
    return value is None or value != value  # None or NaN


def _to_float(value: Any) -> float | None:
    return None if _missing(value) else float(value)


def _to_int(value: Any) -> int | None:
    return None if _missing(value) else int(value)


def _to_bool(value: Any) -> bool | None:
    return None if _missing(value) else bool(value)


_FLOAT_OR_INT = frozenset({float, int})
_FLOAT_INT_NONE = frozenset({float, int, _NONE})
_CSV_SPECIAL = frozenset(',"\r\n')  # a field holding one of these is quoted
_CONVERT: dict[str, Any] = {
    "float64": _to_float,
    "int64": int,
    "Int64": _to_int,
    "bool": bool,
    "boolean": _to_bool,
    "str": str,
}


def _arrow_types() -> dict[str, Any]:
    import pyarrow as pa

    return {
        "float64": pa.float64(),
        "int64": pa.int64(),
        "Int64": pa.int64(),
        "bool": pa.bool_(),
        "boolean": pa.bool_(),
        "str": pa.string(),
    }


def format_problem(fmt: str, field: str = "records.format") -> str | None:
    """Return why records cannot be written in format ``fmt`` here (one line), or None.

    The format itself is checked by the scenario (``csv`` or ``parquet``); this says whether
    Parquet's library, pyarrow, is installed.
    """
    if fmt != "parquet":
        return None
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return f"{field}: parquet needs pyarrow, which is not installed: {PARQUET_INSTALL}"
    return None


def require_format(fmt: str) -> None:
    """Refuse a format other than ``csv`` or ``parquet`` (ValueError), and ``parquet`` without
    pyarrow (ImportError, saying how to install it)."""
    if fmt not in FORMATS:
        raise ValueError(f"records.format: expected csv or parquet, got {fmt!r}")
    problem = format_problem(fmt)
    if problem is not None:
        raise ImportError(problem)


def record_path(folder: str | Path, kind: str, fmt: str) -> Path:
    """Return the file of one record kind in ``folder``: ``<kind>.csv`` or ``<kind>.parquet``."""
    return Path(folder) / f"{kind}.{fmt}"


def with_dtypes(kind: str, frame: pd.DataFrame) -> pd.DataFrame:
    """Return ``frame`` with the schema's dtype for each of its columns of record kind ``kind``
    (an attribute column of a run under a rule set: ``float64`` or ``str``,
    :func:`lobbysim.records.rows.column_dtype`)."""
    schema = ALL_RECORD_COLUMNS[kind]
    dtypes = {
        c: schema[c]
        if c in schema
        else column_dtype(kind, c, pd.api.types.is_numeric_dtype(frame[c]))
        for c in frame.columns
        if c in schema or c.startswith(ATTRIBUTE_PREFIX)
    }
    return frame.astype(dtypes)


def record_frame(
    kind: str, rows: Iterable[Sequence[Any]], columns: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """Return the rows of record kind ``kind`` (tuples in column order) as a typed frame.

    ``columns``: the run's columns of the kind (:func:`lobbysim.records.rows.record_schema`);
    default: :data:`~lobbysim.records.rows.RECORD_COLUMNS`' (a run without a world or parties).
    """
    rows = rows if isinstance(rows, list) else list(rows)
    names = list(RECORD_COLUMNS[kind] if columns is None else columns)
    frame = pd.DataFrame.from_records(rows, columns=names)
    return with_dtypes(kind, frame)


def csv_rows(
    kind: str, rows: Sequence[Sequence[Any]], schema: Mapping[str, str] | None = None
) -> Iterable[Sequence[Any]]:
    """Return rows of kind ``kind`` whose :mod:`csv` text is what pandas writes for them.

    That is, ``record_frame(kind, rows).to_csv(header=False, index=False)``: the rows as they
    are when every value already has its column's type (no NaN in a float column), else with
    the columns that need it converted (ints in a float column to floats, NaN and ``None`` to
    ``None``, the empty field). ``schema``: the run's columns of the kind (as
    :func:`record_frame`'s ``columns``).

    Raises:
        ValueError: a row has not one value per column.
    """
    dtypes = list((RECORD_COLUMNS[kind] if schema is None else schema).values())
    if not rows:
        return rows
    try:
        # One sweep over the rows, then every check runs over a column (cheaper than a sweep
        # over the rows per column: the rows of a long run are spread over a large heap).
        columns: list[Sequence[Any]] = list(zip(*rows, strict=True))
    except ValueError:
        columns = []
    if len(columns) != len(dtypes):
        raise ValueError(f"{kind} records have {len(dtypes)} columns; a row has another number")
    changed = False
    for i, dtype in enumerate(dtypes):
        column = columns[i]
        kinds = set(map(type, column))
        if kinds <= _AS_IS[dtype]:
            if dtype != "float64":
                continue
            total = sum(column)  # NaN only if a value is NaN (or +inf meets -inf)
            if total == total:
                continue
            columns[i] = [None if v != v else v for v in column]
        elif dtype == "float64" and kinds <= _FLOAT_OR_INT and _no_nan(column):
            columns[i] = list(map(float, column))  # ints in a float column, as at time 0
        else:
            columns[i] = list(map(_CONVERT[dtype], column))
        changed = True
    return zip(*columns, strict=True) if changed else rows


def _column_texts(dtype: str, column: Sequence[Any]) -> Sequence[str] | None:
    """Return the CSV fields of one column as pandas writes them, or None if a value needs
    the :mod:`csv` writer (text to quote, a value of another type than the column's)."""
    kinds = set(map(type, column))
    if dtype == "float64":
        if kinds == _AS_IS["float64"]:
            texts = list(map(float.__repr__, column))
            return ["" if t == "nan" else t for t in texts] if "nan" in texts else texts
        if kinds <= _FLOAT_INT_NONE:
            return ["" if v is None or v != v else repr(float(v)) for v in column]
        return None
    if dtype == "str":
        if kinds <= _AS_IS["str"] and all(v and _CSV_SPECIAL.isdisjoint(v) for v in column):
            return column
        return None
    if not kinds <= _AS_IS[dtype]:
        return None
    if _NONE in kinds:
        return ["" if v is None else str(v) for v in column]
    return list(map(str, column))


def csv_text(
    kind: str, rows: Sequence[Sequence[Any]], schema: Mapping[str, str] | None = None
) -> str:
    """Return the CSV lines of rows of kind ``kind``: what pandas writes for them, byte for byte
    (``record_frame(kind, rows).to_csv(header=False, index=False)``).

    Column by column where every value has its column's type and no text needs quoting, else
    through the :mod:`csv` writer (:func:`csv_rows`). ``schema``: the run's columns of the
    kind (as :func:`record_frame`'s ``columns``).

    Raises:
        ValueError: a row has not one value per column.
    """
    dtypes = list((RECORD_COLUMNS[kind] if schema is None else schema).values())
    if not rows:
        return ""
    try:
        columns = list(zip(*rows, strict=True))
    except ValueError:
        columns = []
    if len(columns) != len(dtypes):
        raise ValueError(f"{kind} records have {len(dtypes)} columns; a row has another number")
    fields = []
    for dtype, column in zip(dtypes, columns, strict=True):
        texts = _column_texts(dtype, column)
        if texts is None:
            out = io.StringIO()
            csv.writer(out, lineterminator="\n").writerows(csv_rows(kind, rows, schema))
            return out.getvalue()
        fields.append(texts)
    return "\n".join(map(",".join, zip(*fields, strict=True))) + "\n"


def _no_nan(column: Sequence[float]) -> bool:
    total = sum(column)
    return bool(total == total)


class RecordFileSink:
    """A sink of streamed records: one file per kind in ``folder`` (see the subclasses).

    Called as ``sink(kind, rows)`` by the lobby's records (:class:`lobbysim.sim.entities.Records`)
    with rows in the schema's column order; :meth:`close` once the last rows are in.
    ``schema``: the run's columns of every kind (:func:`lobbysim.records.rows.record_schema`;
    default: :data:`~lobbysim.records.rows.RECORD_COLUMNS`).
    """

    format = DEFAULT_FORMAT

    def __init__(self, folder: Path, schema: Schema | None = None) -> None:
        self.folder = Path(folder)
        self.schema: Schema = RECORD_COLUMNS if schema is None else schema
        self.folder.mkdir(parents=True, exist_ok=True)
        remove_manifest(self.folder)  # of earlier files there: written anew when closed
        self.rows = dict.fromkeys(self.schema, 0)  # written so far, by kind
        self.failed = False  # a write failed: no manifest
        self.closed = False

    def path(self, kind: str) -> Path:
        """Return the file of a record kind."""
        return record_path(self.folder, kind, self.format)

    def __call__(self, kind: str, rows: list[tuple[Any, ...]]) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Finish the files (the Parquet footers) and write the folder's manifest (the rows and
        bytes of each file); calling it again does nothing."""
        if self.closed:
            return
        self.closed = True
        self._finish()
        if not self.failed:
            write_manifest(
                self.folder,
                {
                    self.path(kind).name: {"rows": rows, "bytes": self.path(kind).stat().st_size}
                    for kind, rows in self.rows.items()
                },
            )

    def abort(self) -> None:
        """Stop without completing the files: no manifest is written, so they never load as
        a whole run (a run stopped midway, by Ctrl-C or an error, removes its folder)."""
        self.failed = True
        self.close()

    def _finish(self) -> None:
        """Complete the files (nothing for CSV)."""


def _naming(exc: OSError, path: Path) -> OSError:
    """Return ``exc`` naming ``path`` if it names no file (a failed ``write()`` does not)."""
    if exc.filename is not None or exc.errno is None:
        return exc
    return OSError(exc.errno, exc.strerror, str(path))


class CsvSink(RecordFileSink):
    """Appends streamed record rows to one CSV file per kind in ``folder`` (header first)."""

    format = "csv"

    def __init__(self, folder: Path, schema: Schema | None = None) -> None:
        super().__init__(folder, schema)
        for kind, columns in self.schema.items():
            self._write(kind, "w", ",".join(columns) + "\n")  # no name needs quoting

    def __call__(self, kind: str, rows: list[tuple[Any, ...]]) -> None:
        self._write(kind, "a", csv_text(kind, rows, self.schema[kind]))
        self.rows[kind] += len(rows)

    def _write(self, kind: str, mode: str, text: str) -> None:
        path = self.path(kind)
        try:
            with path.open(mode, encoding="utf-8", newline="") as file:
                file.write(text)
        except OSError as exc:
            self.failed = True
            named = _naming(exc, path)
            if named is exc:
                raise
            raise named from exc


class ParquetSink(RecordFileSink):
    """Writes streamed record rows to one Parquet file per kind in ``folder``, a row group per
    flush; the files are complete once :meth:`close` has written their footers."""

    format = "parquet"

    def __init__(self, folder: Path, schema: Schema | None = None) -> None:
        require_format("parquet")
        import pyarrow.parquet as pq

        super().__init__(folder, schema)
        self._writers = {
            kind: pq.ParquetWriter(self.path(kind), arrow_schema(kind, columns))
            for kind, columns in self.schema.items()
        }

    def __call__(self, kind: str, rows: list[tuple[Any, ...]]) -> None:
        try:
            frame = record_frame(kind, rows, self.schema[kind])
            self._writers[kind].write_table(arrow_table(kind, frame))
        except OSError as exc:
            self.failed = True
            named = _naming(exc, self.path(kind))
            if named is exc:
                raise
            raise named from exc
        self.rows[kind] += len(rows)

    def _finish(self) -> None:
        writers, self._writers = self._writers, {}
        try:
            for writer in writers.values():
                writer.close()
        except OSError:
            self.failed = True
            raise


def inline_sink(folder: Path, fmt: str, schema: Schema | None = None) -> RecordFileSink:
    """Return the sink of format ``fmt`` writing in this process (:class:`CsvSink` or
    :class:`ParquetSink`); the writer process runs one too."""
    return ParquetSink(folder, schema) if fmt == "parquet" else CsvSink(folder, schema)


def arrow_schema(kind: str, columns: Mapping[str, str] | None = None) -> Any:
    """Return the pyarrow schema of a record kind (needs pyarrow); ``columns`` as
    :func:`record_frame`'s."""
    import pyarrow as pa

    types = _arrow_types()
    columns = RECORD_COLUMNS[kind] if columns is None else columns
    return pa.schema([(c, types[t]) for c, t in columns.items()])


def arrow_table(kind: str, frame: pd.DataFrame) -> Any:
    """Return a typed frame of a record kind as a pyarrow table of :func:`arrow_schema` (of
    the frame's columns)."""
    import pyarrow as pa

    numeric = pd.api.types.is_numeric_dtype
    schema = arrow_schema(
        kind, {c: column_dtype(kind, c, numeric(frame[c])) for c in frame.columns}
    )
    return pa.Table.from_pandas(frame, schema=schema, preserve_index=False)


def write_frames(frames: Mapping[str, pd.DataFrame], folder: Path, fmt: str) -> None:
    """Write record frames (by kind) into ``folder`` (made if need be), a file each, as ``fmt``,
    and the folder's manifest (each file's rows and bytes)."""
    require_format(fmt)
    folder.mkdir(parents=True, exist_ok=True)
    remove_manifest(folder)
    written = {}
    for kind, frame in frames.items():
        path = record_path(folder, kind, fmt)
        try:
            if fmt == "csv":
                frame.to_csv(path, index=False)
            else:
                import pyarrow.parquet as pq

                pq.write_table(arrow_table(kind, with_dtypes(kind, frame)), path)
        except OSError as exc:
            named = _naming(exc, path)
            if named is exc:
                raise
            raise named from exc
        written[path.name] = {"rows": len(frame), "bytes": path.stat().st_size}
    write_manifest(folder, written)
