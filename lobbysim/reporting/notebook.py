"""How results show in a notebook (and at the Python prompt): the answer, not the whole frames.

The results themselves (:class:`~lobbysim.experiments.SimulationResult`,
:class:`~lobbysim.experiments.replications.ExperimentResult`) live in the experiments layer,
which cannot import the reporting layer, where the headline and the metrics' units are. So the
notebook-shaped API (:mod:`lobbysim.api`) returns the thin subclasses here, which add what only
reporting knows:

- :class:`NotebookSimulationResult`: ``metrics_table`` (value, unit, which way is better) and a
  notebook table of the key metrics with their units;
- :class:`NotebookExperimentResult`: the headline ``lobbysim run`` and ``compare`` print
  (:func:`~lobbysim.reporting.headline.experiment_headline`), in its repr (cut to
  :data:`REPR_HEADLINE_CHARS`; ``print(result.headline)`` for all of it) and, in a notebook, as
  the report shows it, with the key metrics' means and 95% intervals.

:func:`experiment_text` and :func:`experiment_html` are the two views, shared with
:class:`lobbysim.api.RunFolder`, a finished run's folder read back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from lobbysim.experiments.replications import DIFFERENCE_COLUMNS, ExperimentResult
from lobbysim.experiments.simulation import SimulationResult
from lobbysim.experiments.variants import POLICY
from lobbysim.reporting.document import (
    Block,
    format_number,
    md_table,
    md_text,
    render_html,
)
from lobbysim.reporting.headline import (
    TERMINAL_EXTRA,
    Estimate,
    experiment_headline,
    headline_blocks,
    headline_metrics,
    headline_text,
    metric_unit,
)
from lobbysim.reporting.verdicts import better_direction
from lobbysim.scenario import Scenario
from lobbysim.stats.intervals import CONFIDENCE

REPR_HEADLINE_CHARS = 600
"""At most this much of the headline goes in a result's repr (cut at a line's end)."""


def html_fragment(blocks: Sequence[Block]) -> str:
    """Return report blocks as HTML to embed in a notebook: the body of the report's own page
    (:func:`~lobbysim.reporting.document.render_html`) without the page's style, which would
    restyle the whole notebook."""
    page = render_html(blocks, "lobbysim")
    body = page.partition("<body>\n")[2].rpartition("\n</body>")[0]
    return f'<div class="lobbysim-result">\n{body}\n</div>'


def _fields(result: Any) -> dict[str, Any]:
    return {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}


class NotebookSimulationResult(SimulationResult):
    """A :class:`~lobbysim.experiments.SimulationResult` as :func:`lobbysim.simulate` returns
    it: the same frames and ``metrics`` dict, with the metrics' units."""

    @classmethod
    def of(cls, result: SimulationResult) -> NotebookSimulationResult:
        """Return the notebook view of ``result`` (the same frames and dict, not copies)."""
        return cls(**_fields(result))

    @property
    def metrics_table(self) -> pd.DataFrame:
        """Return the metrics as a frame indexed by metric: ``value``, ``unit`` (empty where
        the metric has none) and ``better`` (``lower``, ``higher`` or ``neither``)."""
        series = self.metrics_series
        names = [str(m) for m in series.index]
        frame = pd.DataFrame(
            {
                "value": series,
                "unit": [metric_unit(m) for m in names],
                "better": [better_direction(m) for m in names],
            },
            index=series.index,
        )
        return frame

    def _repr_html_(self) -> str:
        """Return the notebook's view: what was run and the key metrics with their units."""
        rows = [
            [m, format_number(self.metrics[m]), metric_unit(m) or "-", better_direction(m)]
            for m in self.key_metrics()
        ]
        blocks = [
            md_text(f"**{self.describe()}**"),
            md_table(["metric", "value", "unit", "better"], rows),
            md_text(f"All {len(self.metrics)} metrics: .metrics_table; the records: .games, ..."),
        ]
        return html_fragment(blocks)


@dataclasses.dataclass
class NotebookExperimentResult(ExperimentResult):
    """An :class:`~lobbysim.experiments.replications.ExperimentResult` as
    :func:`lobbysim.compare` returns it: the same frames, shown with their headline, and
    ``folder``, the folder it wrote (with ``out`` or ``report=True``; None when it wrote none),
    which :func:`lobbysim.load_run` reads back."""

    folder: Path | None = dataclasses.field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, result: ExperimentResult, folder: Path | None = None) -> NotebookExperimentResult:
        """Return the notebook view of ``result`` (the same frames, not copies), with the
        folder it was written to, if any (else the folder ``result`` already names)."""
        fields = _fields(result)
        if folder is not None:
            fields["folder"] = Path(folder)
        return cls(**fields)

    @property
    def headline(self) -> str:
        """Return the whole headline, as ``lobbysim run`` and ``compare`` print it."""
        return headline_text(experiment_headline(self))

    def _footer(self) -> str:
        """Return the line naming the tables, and the folder written, if any."""
        if self.folder is None:
            return self.tables()
        return f"{self.tables()}\n  folder: {self.folder} (lobbysim.load_run(result.folder))"

    def __repr__(self) -> str:
        return experiment_text(self, f"ExperimentResult: {self.describe()}", self._footer())

    def _repr_html_(self) -> str:
        return experiment_html(self, f"ExperimentResult: {self.describe()}", self._footer())


def key_metrics(result: ExperimentResult) -> list[str]:
    """Return the metrics the terminal's table shows: the headline's, with a few more."""
    columns = list(result.summary["metric"].unique())
    headline = headline_metrics(columns, result.scenario.raters.driver.name)
    return [*headline[:1], *(m for m in TERMINAL_EXTRA if m in columns), *headline[1:]]


def experiment_text(result: ExperimentResult, title: str, footer: str) -> str:
    """Return a result's repr: ``title``, its headline (up to :data:`REPR_HEADLINE_CHARS`, cut
    at a line's end) and ``footer`` (the line naming its tables), indented."""
    lines = headline_text(experiment_headline(result)).splitlines()
    kept: list[str] = []
    for line in lines:
        if sum(len(k) + 1 for k in kept) + len(line) > REPR_HEADLINE_CHARS:
            kept.append(f"  ... ({len(lines) - len(kept)} more lines: print(result.headline))")
            break
        kept.append(line)
    return "\n".join([title, *kept, f"  {footer}"])


def key_metrics_rows(result: ExperimentResult) -> tuple[list[str], list[list[str]]]:
    """Return the header and rows of the key metrics' table: per metric its unit, which way is
    better and per policy the mean [95% interval] (``summary.csv``'s numbers; the report's
    "Metrics" table, :func:`lobbysim.reporting.run.metrics_table`, has every metric)."""
    summary = result.summary.set_index(["policy", "metric"])
    rows = []
    for metric in key_metrics(result):
        cells = [metric, metric_unit(metric) or "-", better_direction(metric)]
        for policy in result.policies:
            if (policy, metric) not in summary.index:
                cells.append("n/a")
                continue
            row = summary.loc[(policy, metric)]
            estimate = Estimate(float(row["mean"]), float(row["ci_low"]), float(row["ci_high"]))
            cells.append(estimate.text())  # the mean alone where there is no interval
        rows.append(cells)
    return ["metric", "unit", "better", *result.policies], rows


def experiment_html(result: ExperimentResult, title: str, footer: str) -> str:
    """Return a result's notebook view: ``title``, the headline as the report shows it, the key
    metrics' means with their 95% intervals, one column per policy, and ``footer``."""
    n = len(result.seeds)
    what = f"mean [{CONFIDENCE:.0%} CI] over {n} replications" if n > 1 else "1 replication"
    blocks = [
        md_text(f"**{title}**"),
        *headline_blocks(experiment_headline(result)),
        md_text(f"Key metrics, {what} (every metric: .summary; every replication: .replications):"),
        md_table(*key_metrics_rows(result)),
        md_text(footer),
    ]
    return html_fragment(blocks)


def folder_result(
    scenario: Scenario,
    replications: pd.DataFrame,
    summary: pd.DataFrame,
    differences: pd.DataFrame | None,
    policies: list[str],
    kind: str = POLICY,
    sources: dict[str, str] | None = None,
) -> ExperimentResult:
    """Return a run folder's tables as an :class:`ExperimentResult` without runs (``runs``
    empty; the records stay in the folder), for the headline and the views above; ``kind``
    and ``sources`` say what ``policies`` are (:class:`ExperimentResult`'s)."""
    first = replications[replications["policy"] == policies[0]].sort_values("replication")
    if differences is None:  # a run of one policy
        differences = pd.DataFrame(columns=DIFFERENCE_COLUMNS)
    return ExperimentResult(
        scenario=scenario,
        policies=policies,
        seeds=[int(s) for s in first["seed"]],
        runs={},
        metrics=replications,
        summary=summary,
        differences=differences,
        kind=kind,
        sources=dict(sources or {}),
    )
