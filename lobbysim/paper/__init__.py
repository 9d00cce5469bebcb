"""The paper's simulation study engine (one focal player, vectorised over sample paths).

The engine lives in :mod:`lobbysim.paper.study`; its report in :mod:`lobbysim.reporting.paper`
and its command in :mod:`lobbysim.commands.paper`.
"""

from lobbysim.paper.study import (
    CASES,
    DEFAULT_POLICIES,
    METRICS,
    BlockResult,
    PaperResult,
    PaperStudy,
    default_jobs,
    draw_priors,
    run_study,
    simulate_block,
)

__all__ = [
    "CASES",
    "DEFAULT_POLICIES",
    "METRICS",
    "BlockResult",
    "PaperResult",
    "PaperStudy",
    "default_jobs",
    "draw_priors",
    "run_study",
    "simulate_block",
]
