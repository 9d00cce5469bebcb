"""Reporting for the paper's simulation study: CSV files, figures, claims and a Markdown summary.

:mod:`lobbysim.paper` runs the study and returns a :class:`~lobbysim.paper.PaperResult`; this
package does no simulation. ``write_report`` turns a result into files (``per_game.csv``,
``windows.csv``, ``claims.csv``, one PNG figure per metric plus ``overview.png``, and
``summary.md``); ``evaluate_claims`` checks the paper's qualitative Section 4 claims against the
result with z-scores; ``run_paper`` is the library call behind ``lobbysim paper``: it validates
the arguments, runs the study and writes the report atomically (into a temporary sibling folder
renamed into place when complete).

Modules, by concern:

- :mod:`~lobbysim.paper_report.claims`: :func:`evaluate_claims` and its statistics and verdicts;
- :mod:`~lobbysim.paper_report.figures`: the matplotlib figures;
- :mod:`~lobbysim.paper_report.writing`: :func:`write_report`, the CSV files and ``summary.md``;
- :mod:`~lobbysim.paper_report.run`: :func:`run_paper`, argument validation and atomic output.

Every public name is re-exported here, so ``from lobbysim.paper_report import ...`` keeps working.
"""

from __future__ import annotations

from lobbysim.paper_report.claims import (
    CLAIM_COLUMNS,
    CLAIM_TEXT,
    KG,
    VERDICTS,
    Z_THRESHOLD,
    applicable_claims,
    distance_difference,
    evaluate_claims,
)
from lobbysim.paper_report.figures import (
    METRIC_LABELS,
    MOVING_AVERAGE_GAMES,
    REFERENCE_LINES,
    policy_colours,
    write_figures,
)
from lobbysim.paper_report.run import (
    PaperArgumentError,
    PaperRun,
    default_out_dir,
    paper_command,
    paper_windows,
    run_paper,
    validate_paper_arguments,
)
from lobbysim.paper_report.writing import format_estimate, summary_markdown, write_report

__all__ = [
    "CLAIM_COLUMNS",
    "CLAIM_TEXT",
    "KG",
    "METRIC_LABELS",
    "MOVING_AVERAGE_GAMES",
    "REFERENCE_LINES",
    "VERDICTS",
    "Z_THRESHOLD",
    "PaperArgumentError",
    "PaperRun",
    "applicable_claims",
    "default_out_dir",
    "distance_difference",
    "evaluate_claims",
    "format_estimate",
    "paper_command",
    "paper_windows",
    "policy_colours",
    "run_paper",
    "summary_markdown",
    "validate_paper_arguments",
    "write_figures",
    "write_report",
]
