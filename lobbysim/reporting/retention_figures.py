"""The retention figure of a run with a retention model: who stays, by true skill decile.

One line per policy: the share of the members of each true skill decile (of the base when the
metrics start) still in the base at the end, the metrics ``retained_decile_1`` (lowest) to
``retained_decile_10`` of :mod:`lobbysim.sim.engagement`, as the mean over replications with its
95% interval. Next to fairness and queue time it answers the question of Activision's 2024 white
paper on skill in matchmaking: does looser skill matching lose the weaker players?
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.lines import Line2D

from lobbysim.experiments.replications import ExperimentResult
from lobbysim.intervals import CONFIDENCE, interval
from lobbysim.reporting.document import FigureOutcome
from lobbysim.reporting.figures import marker, new_axes, save_figure, style_axes

RETENTION_FIGURE_FILE = "retention_by_skill_decile.png"
DECILES = range(1, 11)


def retention_figure(
    result: ExperimentResult, out_dir: Path, colours: dict[str, str]
) -> FigureOutcome:
    """Draw the retained share by true skill decile, one line per policy, with intervals."""
    title = "Members still in the base at the end, by true skill decile"
    caption = (
        "Of the members in the base when the metrics start, the share of each true skill decile "
        "(1: the weakest tenth) who have not left for good by the end; the mean over "
        f"replications with its {CONFIDENCE:.0%} confidence interval. The policies share the "
        "replication seeds, so the metrics table's paired differences are sharper than the "
        "overlap of these intervals suggests."
    )
    columns = [f"retained_decile_{k}" for k in DECILES]
    metrics = result.metrics
    if not set(columns) <= set(metrics.columns):
        reason = "the scenario has no retention model (base.retention)"
        return FigureOutcome(RETENTION_FIGURE_FILE, title, caption, skipped=reason)
    fig, ax = new_axes()
    x = np.array(list(DECILES), dtype=float)
    width = 0.6 / max(len(result.policies), 1)
    for index, policy in enumerate(result.policies):
        rows = metrics[metrics.policy == policy]
        stats = [interval(rows[c].to_numpy(dtype=float)) for c in columns]
        mean = np.array([s[0] for s in stats])
        low = np.array([s[3] for s in stats])
        high = np.array([s[4] for s in stats])
        offset = (index - (len(result.policies) - 1) / 2) * width
        ax.errorbar(
            x + offset,
            mean,
            yerr=np.vstack([mean - low, high - mean]),
            color=colours[policy],
            marker=marker(index),
            capsize=2,
            label=policy,
        )
    replications = len(result.seeds)
    style_axes(
        ax,
        title=(
            f'{title}\nscenario "{result.scenario.name}", {replications} '
            f"replication{'s' if replications != 1 else ''} per policy"
        ),
        xlabel="true skill decile at the start of the metrics (1: weakest)",
        ylabel="share still in the base at the end",
    )
    ax.set_xticks(x, [str(k) for k in DECILES])
    handles, _ = ax.get_legend_handles_labels()
    bars = f"error bars: {CONFIDENCE:.0%} CI over replications"
    handles.append(Line2D([], [], color="grey", marker="|", linestyle="none", label=bars))
    ax.legend(handles=handles, fontsize="small", loc="lower right")
    path = save_figure(fig, out_dir / RETENTION_FIGURE_FILE)
    return FigureOutcome(RETENTION_FIGURE_FILE, title, caption, path=path)
