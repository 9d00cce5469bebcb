"""A finished run's folder read back: :class:`RunFolder` and :func:`load_run`.

``lobbysim run`` and ``compare`` (and :func:`lobbysim.compare` with ``out``) write a folder of
tables, records and a report; :func:`load_run` reads it back, each table checked against the
folder's manifest, and shows it as the command printed it. :func:`lobbysim.load_run` is this
function (:mod:`lobbysim.api`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from lobbysim.experiments.replications import ExperimentResult
from lobbysim.experiments.variants import POLICY, RULE_SET
from lobbysim.records.outputs import OutputFileError, decode_problem, read_manifest, verify_file
from lobbysim.records.reader import read_records
from lobbysim.records.rows import RECORD_COLUMNS
from lobbysim.registry import did_you_mean
from lobbysim.reporting.notebook import (
    NotebookExperimentResult,
    experiment_html,
    experiment_text,
    folder_result,
)
from lobbysim.scenario import Scenario
from lobbysim.scenario import load_scenario as load_scenario_file
from lobbysim.scenario.specs import record_folders

_PANDAS_2 = int(pd.__version__.split(".")[0]) < 3
"""Whether pandas reads floats exactly only when asked (``float_precision="round_trip"``)."""


@dataclass
class RunFolder:
    """A finished run's folder (``lobbysim run`` or ``compare``), read back.

    Shown, it is its headline, as the command printed it (``print(folder.headline)`` for all of
    it); in a notebook, the headline and the key metrics' means with their 95% intervals.

    Attributes:
        folder: the folder.
        scenario: its ``scenario.yaml``, the resolved scenario as run.
        replications: ``replications.csv``, every metric of every replication: the
            per-replication table, by the name it has everywhere (``metrics`` is the same frame,
            the name :func:`compare`'s result had first).
        summary: ``summary.csv``, per policy and metric the mean with a 95% interval.
        differences: ``differences.csv``, each policy minus the first, paired (None for a run
            of one policy).
        policies: the policies' labels, the first being the reference; of a comparison of
            FlexMatch rule sets, the rule sets' (``kind``).
        kind: ``policy``, or ``rule set`` for a comparison of rule sets (its ``scenario.yaml``
            names the copies of the files, ``rules/<label>.json``, in ``compare.rules``).
    """

    folder: Path
    scenario: Scenario
    replications: pd.DataFrame
    summary: pd.DataFrame
    differences: pd.DataFrame | None
    policies: list[str]
    kind: str = POLICY
    _cache: dict[tuple[str, int], dict[str, pd.DataFrame]] = field(default_factory=dict, repr=False)

    @property
    def report(self) -> Path | None:
        """Return the report's HTML page, if the folder has one."""
        page = self.folder / "report.html"
        return page if page.exists() else None

    @property
    def metrics(self) -> pd.DataFrame:
        """Return the per-replication table, the very ``replications`` frame (the name of
        :func:`compare`'s result's, kept)."""
        return self.replications

    def as_result(self) -> ExperimentResult:
        """Return the folder's tables as an :class:`~lobbysim.experiments.ExperimentResult`
        whose ``runs`` are empty (the records stay in the folder: :meth:`records`)."""
        sources = {}
        if self.kind == RULE_SET:
            sources = {p: rule_copy(self.policies, p) for p in self.policies}
        return folder_result(
            self.scenario,
            self.replications,
            self.summary,
            self.differences,
            self.policies,
            self.kind,
            sources,
        )

    @property
    def headline(self) -> str:
        """Return the run's headline, as ``lobbysim run`` and ``compare`` printed it."""
        return NotebookExperimentResult.of(self.as_result()).headline

    def _views(self) -> tuple[ExperimentResult, str, str]:
        result = self.as_result()
        report = f"report: {self.report.name}" if self.report is not None else "no report"
        footer = f"{result.tables(records='.records(policy, kind)')}; {report}"
        return result, f"RunFolder {self.folder}: {result.describe()}", footer

    def __repr__(self) -> str:
        return experiment_text(*self._views())

    def _repr_html_(self) -> str:
        return experiment_html(*self._views())

    def records(
        self, policy: str | None = None, kind: str | None = None, *, replication: int = 1
    ) -> pd.DataFrame | dict[str, pd.DataFrame]:
        """Return the record frames of a policy, read on first use (then kept).

        Args:
            policy: a policy's label (default: the first, the reference).
            kind: ``games``, ``participants``, ``waits``, ``ratings`` or ``players``; default:
                every kind there is, by kind.
            replication: which replication, for records streamed (``records.stream``), which
                keeps every replication's; otherwise only the first's are kept.

        Raises:
            KeyError: an unknown policy or kind, or records that the folder does not hold.
            lobbysim.records.files.RecordFileError: a record file cut short, changed or
                unreadable (a ValueError naming the file and, where it can, the line).
        """
        label = self.policies[0] if policy is None else policy
        if label not in self.policies:
            raise KeyError(
                f"policy: {label!r} is not in this run{did_you_mean(label, self.policies)}; "
                f"its policies: {', '.join(self.policies)}"
            )
        if kind is not None and kind not in RECORD_COLUMNS:
            raise KeyError(f"kind: expected one of {', '.join(RECORD_COLUMNS)}, got {kind!r}")
        key = (label, replication)
        if key not in self._cache:
            where = self.folder / "records" / record_folders(self.policies)[label]
            streamed = where / f"rep-{replication}"
            if streamed.is_dir():
                where = streamed
            elif replication != 1:
                raise KeyError(
                    f"replication: only the first replication's records are kept unless the "
                    f"scenario streams them (records.stream), got {replication}"
                )
            self._cache[key] = read_records(where, complete=True)
            if not self._cache[key]:
                del self._cache[key]
                raise KeyError(f"no record files in {where}")
        frames = self._cache[key]
        if kind is None:
            return dict(frames)
        if kind not in frames:
            raise KeyError(f"kind: no {kind} records in this run's folder")
        return frames[kind]


def load_run(folder: str | os.PathLike[str]) -> RunFolder:
    """Read a folder written by ``lobbysim run``/``compare`` (or :func:`compare` with ``out``).

    Returns:
        A :class:`RunFolder`: the scenario, the replications, summary and differences frames
        (as :func:`compare` returned them), and ``records(policy, kind)`` for the record frames.

    Every table read is checked first: against the folder's ``manifest.json`` (each file's size
    and SHA-256 when written), for a last row cut short, for bytes that are not UTF-8 and for a
    missing value where every row has one; the record files likewise when ``records()`` reads
    them (:func:`lobbysim.records.reader.read_records`). A folder written before manifests gets
    the checks that need none.

    Raises:
        TypeError: ``folder`` is not a path.
        ValueError: the folder is not a finished run's folder, or one of its files is cut
            short, changed or unreadable (:class:`lobbysim.records.outputs.OutputFileError`, naming
            the
            file and, where it can, the line).

    Example:
        >>> import tempfile, lobbysim
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     result = lobbysim.compare(
        ...         "one_visit",
        ...         ["draw_chance", "fifo"],
        ...         replications=2,
        ...         overrides={"horizon": 60, "warmup": 10},
        ...         out=f"{tmp}/run",
        ...         report=False,
        ...         progress=False,
        ...     )
        ...     folder = lobbysim.load_run(f"{tmp}/run")
        ...     records = folder.records("fifo", "games")
        >>> folder  # doctest: +ELLIPSIS
        RunFolder .../run: one_visit: 2 policies x 2 replications: draw_chance (baseline), fifo
        Headline: each policy minus draw_chance, ...
        ...
        >>> folder.metrics is folder.replications
        True
        >>> folder.summary.equals(result.summary), len(records) == len(result.runs["fifo"][0].games)
        (True, True)
    """
    if not isinstance(folder, str | os.PathLike):
        raise TypeError(f"folder: expected a path, got {type(folder).__name__}")
    path = Path(folder)
    missing = [
        name
        for name in ("scenario.yaml", "replications.csv", "summary.csv")
        if not (path / name).is_file()
    ]
    if missing:
        raise ValueError(
            f"folder: {path} is not the folder of a finished lobbysim run or compare (no "
            f"{', '.join(missing)})"
        )

    manifest = read_manifest(path)

    def table(name: str) -> pd.DataFrame:
        return read_table(path / name, manifest, TABLE_KEYS[name])

    replications = table("replications.csv")
    differences = table("differences.csv") if (path / "differences.csv").is_file() else None
    verify_file(path / "scenario.yaml", manifest)
    scenario = load_scenario_file(path / "scenario.yaml")
    labels = [str(p) for p in dict.fromkeys(replications["policy"])]
    compared = scenario.compare.rules if scenario.compare is not None else None
    copies = [rule_copy(labels, label) for label in labels]
    return RunFolder(
        folder=path,
        scenario=scenario,
        replications=replications,
        summary=table("summary.csv"),
        differences=differences,
        policies=labels,
        kind=RULE_SET if compared is not None and list(compared) == copies else POLICY,
    )


def rule_copy(labels: Sequence[str], label: str) -> str:
    """Return where a comparison of rule sets' folder keeps the copy of the rule set ``label``
    (one of ``labels``), from the folder: ``rules/<its records folder's name>.json``."""
    return f"rules/{record_folders(labels)[label]}.json"


#: The columns of a run folder's tables that every row fills in: a missing one is a damaged file.
TABLE_KEYS: dict[str, tuple[str, ...]] = {
    "replications.csv": ("policy", "replication", "seed"),
    "summary.csv": ("policy", "metric", "n"),
    "differences.csv": ("policy", "baseline", "metric", "n"),
}


def read_table(
    path: Path, manifest: Mapping[str, Mapping[str, Any]] | None, keys: Sequence[str] = ()
) -> pd.DataFrame:
    """Read a table of a run folder, checked (:func:`lobbysim.records.outputs.verify_file`:
    against the
    folder's manifest, for a last row cut short) and with a value in every row of ``keys``.

    Raises:
        OutputFileError: naming the file and, where it can, the line.
    """
    verify_file(path, manifest)
    try:
        # every digit written: pandas 2's default parser reads a float's last digits off
        # (0.0548138864400266 for 0.05481388644002666); pandas 3 reads them exactly by default
        # and refuses the option
        frame = pd.read_csv(path, float_precision="round_trip") if _PANDAS_2 else pd.read_csv(path)
    except UnicodeDecodeError as exc:
        raise decode_problem(path, exc) from None
    except (ValueError, pd.errors.EmptyDataError) as exc:
        raise OutputFileError(
            f"{path}: cannot be read as a table ({' '.join(str(exc).split())})"
        ) from None
    entry = (manifest or {}).get(path.name)
    if entry is not None and entry.get("rows") is not None and len(frame) != entry["rows"]:
        raise OutputFileError(f"{path}: {len(frame)} rows, {entry['rows']} when written")
    absent = [key for key in keys if key not in frame.columns]
    if absent:
        raise OutputFileError(f"{path}: no column {absent[0]!r}; the file is damaged")
    missing = frame[list(keys)].isna().any(axis=1).to_numpy()
    if missing.any():
        row = int(missing.argmax())
        column = next(k for k in keys if pd.isna(frame[k].iat[row]))
        raise OutputFileError(
            f"{path}: line {row + 2} has no {column}, which every row has: the file is cut short "
            "or damaged"
        )
    return frame
