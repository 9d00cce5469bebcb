"""The report of the paper's simulation study: CSV files, figures, claims and ``summary.md``.

:mod:`lobbysim.paper` runs the study and returns a :class:`~lobbysim.paper.PaperResult`; this
package does no simulation. ``write_report`` turns a result into files (``per_game.csv``,
``windows.csv``, ``claims.csv``, one PNG figure per metric plus ``overview.png``, and
``summary.md``); ``evaluate_claims`` checks the paper's qualitative Section 4 claims against the
result with z-scores. The ``lobbysim paper`` command (argument validation, running the study,
writing the folder atomically) is :mod:`lobbysim.commands.paper`.

Modules, by concern:

- :mod:`~lobbysim.reporting.paper.claims`: :func:`evaluate_claims` and its statistics (the
  verdict wording is :mod:`lobbysim.reporting.verdicts`);
- :mod:`~lobbysim.reporting.paper.figures`: the matplotlib figures;
- :mod:`~lobbysim.reporting.paper.writing`: :func:`write_report`, the CSV files and
  ``summary.md``.
"""

from __future__ import annotations

from lobbysim.reporting.paper.claims import (
    CLAIM_COLUMNS,
    CLAIM_TEXT,
    KG,
    VERDICTS,
    applicable_claims,
    distance_difference,
    evaluate_claims,
)
from lobbysim.reporting.paper.figures import (
    METRIC_LABELS,
    MOVING_AVERAGE_GAMES,
    REFERENCE_LINES,
    write_figures,
)
from lobbysim.reporting.paper.writing import format_estimate, summary_markdown, write_report

__all__ = [
    "CLAIM_COLUMNS",
    "CLAIM_TEXT",
    "KG",
    "METRIC_LABELS",
    "MOVING_AVERAGE_GAMES",
    "REFERENCE_LINES",
    "VERDICTS",
    "applicable_claims",
    "distance_difference",
    "evaluate_claims",
    "format_estimate",
    "summary_markdown",
    "write_figures",
    "write_report",
]
