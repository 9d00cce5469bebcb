"""A match log's file read in chunks: CSV (gzipped or not) or Parquet, its header, its text.

:func:`file_kind` tells the two apart by name; :func:`csv_header` and :func:`parquet_file` open a
file and give its columns; :func:`csv_chunks` and :func:`parquet_chunks` stream the columns a log
needs, ``chunk_rows`` rows at a time, ids and other text as strings (empty: missing). A file that
is not UTF-8 (with its line and byte), not CSV or Parquet, or Parquet without pyarrow is a
:class:`~lobbysim.calibration.mapping.LogError` of one line. :mod:`lobbysim.calibration.read`
turns the chunks into a match log (its docstring's "Memory" says what a chunk holds).
"""

from __future__ import annotations

import gzip
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from lobbysim.calibration.mapping import LogError

PARQUET_INSTALL = "pip install 'lobbysim[parquet]'"
# pandas 3.1 reads every float exactly (and deprecates the option); before it, only the
# round-trip parser does, so that the minutes ``records_to_log`` writes read back as they were
_PANDAS = tuple(int(part) for part in pd.__version__.split(".")[:2])
_EXACT_FLOATS: dict[str, Any] = {} if _PANDAS >= (3, 1) else {"float_precision": "round_trip"}


def file_kind(path: Path) -> str:
    """Return ``"csv"`` or ``"parquet"``, by the file's name."""
    name = path.name.lower()
    if name.endswith((".csv", ".csv.gz")):
        return "csv"
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    raise LogError(f"{path}: expected a .csv, .csv.gz or .parquet file")


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _utf8_problem(path: Path, encoding: str) -> str:
    """Return where a CSV file (gzipped or not) first stops being text in ``encoding``."""
    if encoding.lower().replace("_", "-") not in ("utf-8", "utf-8-sig", "utf8"):
        return f"is not {encoding} text"
    opener: Any = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rb") as fh:
        for number, line in enumerate(fh, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                return (
                    f"line {number} is not UTF-8 (byte 0x{line[exc.start]:02x} at column "
                    f"{exc.start + 1})"
                )
    return "is not UTF-8 text"


def csv_header(path: Path, encoding: str) -> list[str]:
    """Return the column names of a CSV file's header line."""
    try:
        return [str(c) for c in pd.read_csv(path, nrows=0, encoding=encoding).columns]
    except UnicodeDecodeError:
        raise LogError(f"{path}: {_utf8_problem(path, encoding)}") from None
    except pd.errors.EmptyDataError:
        raise LogError(f"{path}: the file is empty (no header line)") from None
    except LookupError:
        raise LogError(f"{path}: encoding: unknown text encoding {encoding!r}") from None
    except (ValueError, OSError, EOFError) as exc:
        raise LogError(f"{path}: cannot be read as CSV: {_one_line(exc)}") from None


def csv_chunks(
    path: Path, columns: list[str], text: set[str], encoding: str, chunk_rows: int
) -> Iterator[pd.DataFrame]:
    """Yield ``columns`` of a CSV file, ``chunk_rows`` rows at a time, ``text`` as strings."""
    # Every column is parsed, not only ``columns``: with ``usecols`` pandas drops the extra
    # fields of a row silently (an unquoted comma would shift a row's values unnoticed).
    reader = pd.read_csv(
        path,
        index_col=False,
        dtype={column: str for column in text},
        keep_default_na=False,
        na_values=[""],
        chunksize=chunk_rows,
        encoding=encoding,
        low_memory=False,
        **_EXACT_FLOATS,
    )
    with reader, warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.ParserWarning)
        while True:
            try:
                chunk = next(reader)
            except StopIteration:
                return
            except UnicodeDecodeError:
                raise LogError(f"{path}: {_utf8_problem(path, encoding)}") from None
            except pd.errors.ParserWarning:
                raise LogError(
                    f"{path}: cannot be read as CSV: a row has more fields than the header "
                    "(an unquoted comma?)"
                ) from None
            except (ValueError, OSError, EOFError) as exc:
                raise LogError(f"{path}: cannot be read as CSV: {_one_line(exc)}") from None
            yield chunk[columns]


def parquet_file(path: Path) -> Any:
    """Return a Parquet file opened by pyarrow (its ``schema_arrow`` names its columns)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise LogError(
            f"{path}: reading Parquet needs pyarrow, which is not installed: {PARQUET_INSTALL}"
        ) from None
    try:
        return pq.ParquetFile(path)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise LogError(f"{path}: cannot be read as Parquet: {_one_line(exc)}") from None


def parquet_chunks(
    parquet: Any, path: Path, columns: list[str], text: set[str], chunk_rows: int
) -> Iterator[pd.DataFrame]:
    """Yield ``columns`` of a Parquet file, ``chunk_rows`` rows at a time, ``text`` as strings
    (empty: missing)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    batches = parquet.iter_batches(batch_size=chunk_rows, columns=columns)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except (OSError, ValueError) as exc:
            raise LogError(f"{path}: cannot be read as Parquet: {_one_line(exc)}") from None
        table = pa.Table.from_batches([batch])
        for name in text:
            index = table.schema.get_field_index(name)
            array = table.column(index)
            if pa.types.is_dictionary(array.type):
                array = array.cast(array.type.value_type)
            if not pa.types.is_string(array.type):
                try:
                    array = pc.cast(array, pa.string())
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise LogError(f"{path}: column {name!r}: {_one_line(exc)}") from None
            array = pc.if_else(pc.equal(array, ""), pa.scalar(None, pa.string()), array)
            table = table.set_column(index, name, array)
        yield table.to_pandas()
