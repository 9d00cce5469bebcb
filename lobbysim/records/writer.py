"""The record writer process: streamed records formatted and written beside the running lobby.

A run that streams its records (``records.stream``) hands them to the sink :func:`open_sink` returns
(:func:`background_writer_available` decides which): a sink of :mod:`lobbysim.records.files` in this
process, or, on a Linux machine with a core to spare and in a process without other threads, a
:class:`BackgroundSink`: the rows of each flush are pickled down a pipe to a writer process of their
own (:func:`_write_records`, forked, named ``lobbysim-records``), which runs the format's own sink
on them, so the files are byte for byte those the sink writes in-process while the simulation goes
on. The writer ignores SIGINT and SIGTERM (the run's own handling of them closes it), stops when the
pipe closes and dies with the run's process if that is killed outright; an error it meets (a full
disk) comes back to the run as the same :class:`OSError`, naming the file.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import pickle
import queue
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from lobbysim.records.files import (
    DEFAULT_FORMAT,
    RecordFileSink,
    Schema,
    inline_sink,
    require_format,
)
from lobbysim.running.workers import die_with_parent

WRITER_BATCH_ROWS = 5_000  # rows of a kind a run buffers at most before handing them over


class BackgroundSink(RecordFileSink):
    """Streams records through a writer process that formats and writes them.

    The rows a flush hands over are pickled down a pipe (about a tenth of the cost of formatting
    them as CSV), and the writer process runs the format's sink
    (:class:`~lobbysim.records.files.CsvSink` or :class:`~lobbysim.records.files.ParquetSink`) on
    them in order, so the files are byte for byte those the sink writes
    in-process, while the simulation goes on. The pipe's buffer bounds what is in flight: a
    simulation faster than its writer waits for it. :meth:`close` returns once every row is
    written and the files are complete. The writer ignores SIGINT and SIGTERM (the run's own
    handling of them closes it); it stops when the pipe closes, and dies with the run's process if
    that is killed outright (:func:`lobbysim.running.workers.die_with_parent`). A sink still
    open when the interpreter exits is closed then (its files completed), before
    :mod:`multiprocessing` waits for its children: the writer would otherwise wait for rows that
    never come, and the exit with it.

    Raises:
        OSError: the writer could not create or write the files (the writer's message, with
            its error number and file: a full disk names the file), or it stopped; raised
            once, by the call that finds it (:meth:`close` then only cleans up).
    """

    #: A run hands rows over once this many of a kind are buffered (fewer if ``flush_rows`` says
    #: so): the writer then works alongside the run, and little is left to write after its end.
    batch_rows = WRITER_BATCH_ROWS

    def __init__(
        self, folder: Path, fmt: str = DEFAULT_FORMAT, schema: Schema | None = None
    ) -> None:
        super().__init__(folder, schema)
        self.format = fmt
        context = multiprocessing.get_context("fork")
        here, there = context.Pipe()
        self._conn: Any = here
        self._process = context.Process(
            target=_write_records,
            args=(there, str(self.folder), fmt, os.getpid(), here, self.schema),
            name="lobbysim-records",
            daemon=True,
        )
        self._process.start()
        there.close()
        atexit.register(self._close_at_exit)
        self._failed = False  # an error has been raised (close() then only cleans up)
        try:
            status = self._receive()
        except BaseException:  # Ctrl-C or SIGTERM while the writer starts: it would go on
            self.abort()  # creating its files in a folder the run is about to remove
            raise
        if status is not None:
            self._failed = True
            self.close()
            self._raise_if_failed(status)

    def __call__(self, kind: str, rows: list[tuple[Any, ...]]) -> None:
        if self._conn is None:
            raise OSError("the record writer is closed")
        status = self._receive() if self._conn.poll() else None
        if status is None:
            try:
                # what Connection.send does, without its pickler's copyreg dispatch table (rows
                # hold plain values): ~10-20% less time; the writer's recv() unpickles it
                self._conn.send_bytes(pickle.dumps((kind, rows), protocol=pickle.HIGHEST_PROTOCOL))
            except OSError:
                status = self._receive() or "the record writer process stopped"
        if status is not None:
            self._failed = True
            self._raise_if_failed(status)

    def close(self) -> None:
        """Wait until every row is written and the files are complete; stop the writer."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        atexit.unregister(self._close_at_exit)
        try:
            conn.send(None)
            status = conn.recv()
        except (OSError, EOFError):
            status = "the record writer process stopped"
        except BaseException:  # Ctrl-C or SIGTERM while the writer finishes: stop it now
            self._process.kill()
            raise
        finally:
            conn.close()
            self._process.join(timeout=60)
            if self._process.is_alive():
                self._process.kill()
                self._process.join()
        if not self._failed:
            self._raise_if_failed(status)

    def abort(self) -> None:
        """Stop the writer at once, without waiting for it to write what is in flight.

        A run stopped midway (Ctrl-C, SIGTERM, an error) calls this rather than :meth:`close`:
        the signal may have cut a batch half-sent down the pipe, and a writer waiting for the
        rest of it would never answer.
        """
        conn, self._conn = self._conn, None
        self._failed = True
        if conn is None:
            return
        atexit.unregister(self._close_at_exit)
        conn.close()
        self._process.kill()
        self._process.join()

    def _close_at_exit(self) -> None:
        try:
            self.close()
        except OSError as exc:  # nobody left to raise it to
            print(f"lobbysim: {exc}", file=sys.stderr)

    def _receive(self) -> Failure:
        """Return the writer's next message (None: all is well), or why it cannot be read."""
        try:
            message: Failure = self._conn.recv()
        except (OSError, EOFError):
            return "the record writer process stopped"
        return message

    @staticmethod
    def _raise_if_failed(status: Failure) -> None:
        if status is None:
            return
        if isinstance(status, tuple):  # an OSError of the writer: its number and file
            name, number, strerror, filename = status
            raise OSError(number, f"writing the records: {name}: {strerror}", filename)
        raise OSError(f"writing the records: {status}")


WRITER_BACKLOG = 4  # batches the writer process holds unwritten before the run waits for it
_GONE = "gone"  # the run has gone (the pipe closed)
#: What the writer reports: None (all is well), a message, or an OSError's type name, number,
#: text and file.
Failure = str | tuple[str, int, str | None, str | None] | None


def _write_records(
    conn: Any,
    folder: str,
    fmt: str,
    parent: int,
    run_end: Any = None,
    schema: Schema | None = None,
) -> None:
    """The writer process of :class:`BackgroundSink`: run the sink on what comes down ``conn``.

    Replies once with None (ready) or a message; then writes every ``(kind, rows)`` until None
    comes, and replies with None (done) or the first error's message, which it also sends as
    soon as it happens (it then reads on without writing, so the run never blocks on it). A
    thread reads the pipe while the main thread writes, up to :data:`WRITER_BACKLOG` batches
    ahead, so a run that flushes several kinds at once hands them over without waiting. It
    dies with the run's process ``parent`` (:func:`lobbysim.running.workers.die_with_parent`);
    ``run_end``, the run's end of the pipe, is closed here; ``schema``: the run's columns.
    """
    die_with_parent(parent)
    if run_end is not None:  # the run's end of the pipe, inherited with the fork: its EOF comes
        run_end.close()  # only once no process holds that end
    # the run's own handling of Ctrl-C and SIGTERM closes the writer (its handlers, inherited
    # with the fork, are not the writer's)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        sink = inline_sink(Path(folder), fmt, schema)
    except Exception as exc:  # reported by the run, which stops
        conn.send(_failure(exc))
        return
    conn.send(None)
    inbox: queue.Queue[Any] = queue.Queue(maxsize=WRITER_BACKLOG)

    def read() -> None:
        while True:
            try:
                item = conn.recv()
            except EOFError:
                item = _GONE
            inbox.put(item)
            if item is None or item is _GONE:
                return

    threading.Thread(target=read, name="lobbysim-records-reader", daemon=True).start()
    error: Failure = None
    while True:
        item = inbox.get()
        if item is _GONE:  # the run has gone
            return
        if item is None:
            break
        if error is None:
            try:
                sink(*item)
            except Exception as exc:
                error = _failure(exc)
                conn.send(error)
    if error is None:
        try:
            sink.close()
        except Exception as exc:
            error = _failure(exc)
    conn.send(error)


def _failure(exc: BaseException) -> Failure:
    """Return what the writer reports of ``exc``: an OSError's number and file, so that the run
    raises the same error (a full disk is one line naming the file); else its message."""
    if isinstance(exc, OSError) and exc.errno is not None:
        filename = None if exc.filename is None else os.fsdecode(exc.filename)
        return type(exc).__name__, exc.errno, exc.strerror, filename
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"


def open_sink(
    folder: str | Path,
    fmt: str = DEFAULT_FORMAT,
    *,
    background: bool | None = None,
    schema: Schema | None = None,
) -> RecordFileSink:
    """Return the sink streaming records to ``folder`` in format ``fmt``.

    Args:
        folder: where the files go.
        fmt: ``csv`` or ``parquet``.
        background: write them in a writer process (:class:`BackgroundSink`); by default when
            one can be started and a core is free for it (:func:`background_writer_available`).
        schema: the run's columns of every kind (:func:`lobbysim.records.rows.record_schema`;
            default: :data:`~lobbysim.records.rows.RECORD_COLUMNS`).

    Raises:
        ImportError: ``parquet`` without pyarrow installed (the message says how to install it).
    """
    require_format(fmt)
    if background is None:
        background = background_writer_available()
    if background:
        return BackgroundSink(Path(folder), fmt, schema)
    return inline_sink(Path(folder), fmt, schema)


def background_writer_available() -> bool:
    """Whether streamed records may be written by a writer process of their own.

    Only the main process of a run starts one, on a Linux machine with more than one core, and
    only while it runs no other thread: the writer is forked (a fresh interpreter would import
    the user's main module again), and forking a process with threads is unsafe. A replication
    run in a worker process shares the cores with other workers, where a writer process each
    would only add work; a Jupyter kernel has threads of its own.
    """
    return (
        sys.platform.startswith("linux")
        and multiprocessing.parent_process() is None
        and (os.cpu_count() or 1) > 1
        and threading.active_count() == 1
    )
