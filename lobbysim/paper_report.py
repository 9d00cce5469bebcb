"""Reporting for the paper's simulation study: CSV files, figures, claims and a Markdown summary.

:mod:`lobbysim.paper` runs the study and returns a :class:`~lobbysim.paper.PaperResult`; this module
does no simulation. ``write_report`` turns a result into files (``per_game.csv``, ``windows.csv``,
``claims.csv``, one PNG figure per metric plus ``overview.png``, and ``summary.md``);
``evaluate_claims`` checks the paper's qualitative Section 4 claims against the result with
z-scores; ``run_paper`` is the library call behind ``lobbysim paper``: it validates the arguments,
runs the study and writes the report atomically (into a temporary sibling folder renamed into
place when complete).
"""

from __future__ import annotations

import math
import os
import shlex
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from lobbysim.paper import (
    CASES,
    DEFAULT_POLICIES,
    METRICS,
    PaperResult,
    PaperStudy,
    default_jobs,
    run_study,
)
from lobbysim.policies import POLICIES

KG = "knowledge_gradient"
"""The policy whose claims the paper makes; every comparison is KG against another policy."""

METRIC_LABELS = {
    "draw_prob_true": "true draw probability (eq. 14)",
    "sq_error": "squared error (mu_0^n - s_0)^2",
    "skill_diff": "skill difference s_0 - s_opponent",
    "win": "player 0 win rate",
}
"""Axis labels of the metrics, in words."""

REFERENCE_LINES = {"skill_diff": 0.0, "win": 0.5}
"""Dashed reference lines: the ideal skill difference and win rate."""

MOVING_AVERAGE_GAMES = 20
"""Games in the trailing moving average drawn over the (very noisy) per-game win rate."""

VERDICTS = ("supported", "not supported", "contradicted")
Z_THRESHOLD = 2.0
"""|z| at which a difference counts as significant (about a two-sided 5% test)."""

CLAIM_COLUMNS = [
    "claim",
    "comparison",
    "window",
    "statistic",
    "estimate",
    "se",
    "z",
    "verdict",
    "relative_difference",
]

_POLICY_COLOURS = {
    "point_estimate": "tab:blue",
    "draw_chance": "tab:orange",
    "knowledge_gradient": "tab:green",
}
_SPARE_COLOURS = ("tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan")

CLAIM_TEXT = {
    "a": "(a) KG explores more in the first ~100 games (lower true draw probability)",
    "b": "(b) KG learns player 0's skill faster (lower squared error early)",
    "c": "(c) after ~100 games KG gives higher true draw probability",
    "d": "(d) after ~100 games KG's win ratio is closer to 0.5",
    "e": "(e) after ~100 games KG's skill difference is closer to 0",
    "f": "(f) the three policies perform similarly (middle case)",
}
"""The paper's qualitative Section 4 claims, as checked by :func:`evaluate_claims`."""


# --------------------------------------------------------------------------------------------
# Claims


def _z(estimate: float, se: float) -> float:
    """Return estimate / se; +-inf for a non-zero estimate with zero SE, NaN for 0 / 0."""
    if se > 0:
        return estimate / se
    if estimate == 0 or math.isnan(estimate):
        return math.nan
    return math.copysign(math.inf, estimate)


def _directional_verdict(z: float, direction: int) -> str:
    """Return the verdict for a claim that ``direction * estimate > 0`` (direction +1 or -1)."""
    if math.isnan(z):
        return "not supported"
    if direction * z >= Z_THRESHOLD:
        return "supported"
    if direction * z <= -Z_THRESHOLD:
        return "contradicted"
    return "not supported"


def _relative(estimate: float, reference: float) -> float:
    """Return estimate / |reference|, NaN when the reference is 0."""
    return estimate / abs(reference) if reference != 0 else math.nan


def _window_row(windows: pd.DataFrame, kind: str, policy: str, window: str) -> pd.Series:
    rows = windows[
        (windows["kind"] == kind) & (windows["policy"] == policy) & (windows["window"] == window)
    ]
    if len(rows) != 1:
        raise ValueError(f"windows has {len(rows)} rows for {kind} {policy!r} in window {window}")
    return rows.iloc[0]


def _paired_claim(
    result: PaperResult, claim: str, other: str, window: str, metric: str, direction: int
) -> dict[str, Any]:
    """A claim about the paired difference KG - other of one metric in one window.

    ``direction`` is -1 (claimed < 0), +1 (claimed > 0) or 0 (claimed: no significant difference).
    """
    paired = _window_row(result.windows, "paired_difference", f"{KG} - {other}", window)
    other_mean = _window_row(result.windows, "mean", other, window)
    estimate, se = float(paired[metric]), float(paired[f"{metric}_se"])
    z = _z(estimate, se)
    if direction == 0:
        verdict = "supported" if abs(z) < Z_THRESHOLD else "not supported"
        expected = "|z| < 2"
    else:
        verdict = _directional_verdict(z, direction)
        expected = "< 0" if direction < 0 else "> 0"
    return {
        "claim": CLAIM_TEXT[claim],
        "comparison": f"{KG} vs {other}",
        "window": window,
        "statistic": f"{metric}: KG - other, paired; expected {expected}",
        "estimate": estimate,
        "se": se,
        "z": z,
        "verdict": verdict,
        "relative_difference": _relative(estimate, float(other_mean[metric])),
    }


def distance_difference(
    kg_values: np.ndarray, other_values: np.ndarray, target: float
) -> tuple[float, float]:
    """Return (estimate, se) of |mean(kg) - target| - |mean(other) - target| over paired paths.

    Per path p, u_p = sgn_kg * (kg_p - target) - sgn_other * (other_p - target), where sgn is the
    sign of that policy's mean minus the target (+1 when the mean sits exactly on the target, so
    that its variability still counts). mean(u) is exactly the difference of distances and
    std(u, ddof=1) / sqrt(paths) its standard error (the delta method for |.|, paired by path).

    Args:
        kg_values: KG's per-path values (e.g. late-window win rates), shape (paths,).
        other_values: the other policy's per-path values on the same paths.
        target: the ideal value (0.5 for the win rate, 0 for the skill difference).
    """
    kg = np.asarray(kg_values, dtype=np.float64)
    other = np.asarray(other_values, dtype=np.float64)
    if kg.shape != other.shape or kg.ndim != 1 or kg.size < 2:
        raise ValueError(f"need two paired 1-d arrays of >= 2 paths, got {kg.shape}, {other.shape}")
    sgn_kg = 1.0 if kg.mean() >= target else -1.0
    sgn_other = 1.0 if other.mean() >= target else -1.0
    u = sgn_kg * (kg - target) - sgn_other * (other - target)
    return float(u.mean()), float(u.std(ddof=1) / math.sqrt(u.size))


def _distance_claim(
    result: PaperResult, claim: str, other: str, metric: str, target: float
) -> dict[str, Any]:
    """Claim (d) or (e): in the late window KG's metric is closer to ``target`` than other's."""
    labels = result.study.window_labels()
    late = len(labels) - 1
    k = METRICS.index(metric)
    kg_values = result.path_windows[KG][:, late, k]
    other_values = result.path_windows[other][:, late, k]
    estimate, se = distance_difference(kg_values, other_values, target)
    z = _z(estimate, se)
    return {
        "claim": CLAIM_TEXT[claim],
        "comparison": f"{KG} vs {other}",
        "window": labels[late],
        "statistic": (
            f"|{metric}_KG - {target:g}| - |{metric}_other - {target:g}|, paired; expected < 0"
        ),
        "estimate": estimate,
        "se": se,
        "z": z,
        "verdict": _directional_verdict(z, -1),
        "relative_difference": _relative(estimate, float(other_values.mean()) - target),
    }


def applicable_claims(study: PaperStudy) -> list[str]:
    """Return the letters of the paper's claims that apply to the study's case.

    Top and bottom: (a)-(e). Middle: (a) and (f), plus (d) and (e) with equal priors (the paper:
    with equal priors KG comes closer to a 0.5 win ratio and 0 skill difference in the middle).
    """
    if study.case in ("top", "bottom"):
        return ["a", "b", "c", "d", "e"]
    return ["a", "d", "e", "f"] if study.equal_priors else ["a", "f"]


def evaluate_claims(result: PaperResult) -> pd.DataFrame:
    """Check the paper's Section 4 claims that apply to the result's case, KG against each other.

    Early is the study's first window, late its last. Claims (a)-(c) and (f) use the paired
    differences KG - other of ``result.windows`` (z = difference / its SE over paths); (d) and
    (e) use the per-path late-window averages of ``result.path_windows`` (see
    :func:`distance_difference`). A directional claim is "supported" when z lies in the claimed
    direction with |z| >= 2, "contradicted" when it lies against it with |z| >= 2 and "not
    supported" otherwise; claim (f), no difference, is "supported" when |z| < 2.

    Args:
        result: the study's result.

    Returns:
        One row per claim, comparison and (for (f)) metric, with the columns of
        :data:`CLAIM_COLUMNS`; ``relative_difference`` is the estimate relative to the other
        policy's window mean (for (d)/(e): to its distance from the target). Empty when KG or
        every other policy is absent.
    """
    rows: list[dict[str, Any]] = []
    if KG in result.policies:
        labels = result.study.window_labels()
        early, late = labels[0], labels[-1]
        others = [name for name in result.policies if name != KG]
        for claim in applicable_claims(result.study):
            for other in others:
                if claim == "a":
                    rows.append(_paired_claim(result, "a", other, early, "draw_prob_true", -1))
                elif claim == "b":
                    rows.append(_paired_claim(result, "b", other, early, "sq_error", -1))
                elif claim == "c":
                    rows.append(_paired_claim(result, "c", other, late, "draw_prob_true", +1))
                elif claim == "d":
                    rows.append(_distance_claim(result, "d", other, "win", 0.5))
                elif claim == "e":
                    rows.append(_distance_claim(result, "e", other, "skill_diff", 0.0))
                else:
                    for metric in METRICS:
                        rows.append(_paired_claim(result, "f", other, late, metric, 0))
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)


# --------------------------------------------------------------------------------------------
# Figures


def policy_colours(policies: Sequence[str]) -> dict[str, str]:
    """Return a colour per policy: fixed ones for the paper's three, then spare ones in order."""
    spare = iter(_SPARE_COLOURS * (1 + len(policies) // len(_SPARE_COLOURS)))
    return {name: _POLICY_COLOURS.get(name) or next(spare) for name in policies}


def _case_title(result: PaperResult) -> str:
    study = result.study
    priors = ", equal priors" if study.equal_priors else ""
    return f"case {study.case}{priors}, {result.paths} paths, seed {result.seed}"


def _draw_metric(
    ax: Axes, result: PaperResult, metric: str, colours: dict[str, str], *, title: str
) -> list[Any]:
    """Draw one metric on ``ax``; return the legend handles."""
    handles: list[Any] = []
    smooth = metric == "win"
    for name in result.policies:
        frame = result.per_game[result.per_game["policy"] == name]
        games = frame["game"].to_numpy()
        mean = frame[metric].to_numpy()
        se = frame[f"{metric}_se"].to_numpy()
        colour = colours[name]
        ax.fill_between(games, mean - se, mean + se, color=colour, alpha=0.2, linewidth=0)
        if smooth:
            ax.plot(games, mean, color=colour, linewidth=0.6, alpha=0.5)
            average = pd.Series(mean).rolling(MOVING_AVERAGE_GAMES, min_periods=1).mean()
            ax.plot(games, average.to_numpy(), color=colour, linewidth=2.0)
        else:
            ax.plot(games, mean, color=colour, linewidth=1.5)
        handles.append(Line2D([], [], color=colour, linewidth=2.0, label=name))
    handles.append(Patch(color="grey", alpha=0.3, label="band: ±1 standard error over paths"))
    if smooth:
        handles.append(
            Line2D([], [], color="grey", linewidth=0.6, alpha=0.7, label="thin: per-game mean")
        )
        handles.append(
            Line2D(
                [],
                [],
                color="grey",
                linewidth=2.0,
                label=f"thick: {MOVING_AVERAGE_GAMES}-game trailing moving average",
            )
        )
    if metric in REFERENCE_LINES:
        value = REFERENCE_LINES[metric]
        ax.axhline(value, color="black", linestyle="--", linewidth=1.0)
        handles.append(
            Line2D(
                [], [], color="black", linestyle="--", linewidth=1.0, label=f"ideal value {value:g}"
            )
        )
    for first, _ in result.study.windows[1:]:
        ax.axvline(first - 0.5, color="grey", linestyle=":", linewidth=0.8)
    handles.append(
        Line2D([], [], color="grey", linestyle=":", linewidth=0.8, label="window boundaries")
    )
    ax.set_xlim(1, result.study.n_games)
    ax.set_xlabel("game n")
    ax.set_ylabel(METRIC_LABELS[metric])
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    return handles


def write_figures(result: PaperResult, out_dir: Path) -> list[Path]:
    """Write one PNG per metric and ``overview.png`` (a 2x2 grid) into ``out_dir``."""
    colours = policy_colours(result.policies)
    written: list[Path] = []
    for metric in METRICS:
        fig = Figure(figsize=(8.0, 5.0), layout="constrained")
        ax = fig.add_subplot()
        title = f"{METRIC_LABELS[metric]}\n{_case_title(result)}"
        handles = _draw_metric(ax, result, metric, colours, title=title)
        ax.legend(handles=handles, fontsize="small", loc="best")
        path = out_dir / f"{metric}.png"
        fig.savefig(path, dpi=150)
        written.append(path)

    fig = Figure(figsize=(13.0, 9.5), layout="constrained")
    axes = fig.subplots(2, 2)
    panel_handles: list[Any] = []
    for ax, metric in zip(axes.flat, METRICS, strict=True):
        panel_handles = _draw_metric(ax, result, metric, colours, title=METRIC_LABELS[metric])
    # The last panel (win) has the fullest legend; the ideal values differ per panel.
    shared = [h for h in panel_handles if not str(h.get_label()).startswith("ideal value")]
    shared.append(
        Line2D(
            [],
            [],
            color="black",
            linestyle="--",
            linewidth=1.0,
            label="ideal value (0.5 win rate, 0 skill difference)",
        )
    )
    fig.legend(handles=shared, loc="outside lower center", ncol=4, fontsize="small")
    fig.suptitle(f"Paper study (Section 4): {_case_title(result)}")
    path = out_dir / "overview.png"
    fig.savefig(path, dpi=150)
    written.append(path)
    return written


# --------------------------------------------------------------------------------------------
# Markdown


def format_estimate(value: float, se: float) -> str:
    """Return ``"value ± se"`` with the SE to two significant digits and the value to match."""
    if not (math.isfinite(se) and se > 0):
        return f"{value:.4f} ± {se:.2g}"
    decimals = min(max(1 - math.floor(math.log10(se)), 0), 10)
    return f"{value:.{decimals}f} ± {se:.{decimals}f}"


def _windows_table(windows: pd.DataFrame, kind: str) -> list[str]:
    frame = windows[windows["kind"] == kind]
    head = "| policy | window | " + " | ".join(METRICS) + " |"
    lines = [head, "|" + " --- |" * (2 + len(METRICS))]
    for _, row in frame.iterrows():
        cells = [format_estimate(float(row[m]), float(row[f"{m}_se"])) for m in METRICS]
        lines.append(f"| {row['policy']} | {row['window']} | " + " | ".join(cells) + " |")
    return lines


def _claim_line(row: pd.Series) -> str:
    relative = row["relative_difference"]
    rel = "n/a" if math.isnan(relative) else f"{relative:+.1%}"
    return (
        f"- **{row['claim']}**: {row['comparison']}, window {row['window']}; "
        f"{row['statistic']}: estimate {format_estimate(row['estimate'], row['se'])}, "
        f"z = {row['z']:.2f}, relative difference {rel} → **{row['verdict']}**"
    )


def _claims_section(result: PaperResult, claims: pd.DataFrame) -> list[str]:
    lines = ["## Claims", ""]
    labels = result.study.window_labels()
    if claims.empty:
        lines.append(f"No claim applies: the paper's claims compare {KG} with another policy, and ")
        lines[-1] += f"the policies run were {', '.join(result.policies)}."
        return lines
    lines += [
        "The paper's qualitative claims (Section 4) that apply to this case, KG = "
        f"{KG} against each other policy; early = window {labels[0]}, late = window {labels[-1]}.",
        "",
    ]
    lines += [_claim_line(row) for _, row in claims.iterrows()]
    lines += [
        "",
        "How z was computed: every policy ran on the same sample paths (common random numbers). "
        "For (a)-(c) and (f), z = mean over paths of the per-path window-average difference "
        "KG - other, divided by its standard error (sample standard deviation / sqrt(paths)). "
        "For (d) and (e), per path u = sgn_KG·(x_KG - t) - sgn_other·(x_other - t) with x the "
        "late-window average, t the target (0.5 win rate, 0 skill difference) and sgn the sign "
        "of that policy's mean minus t; the estimate is mean(u) = |mean x_KG - t| - "
        "|mean x_other - t| and z = mean(u) / (sd(u) / sqrt(paths)). Verdicts: supported = z in "
        "the claimed direction with |z| >= 2; contradicted = z against it with |z| >= 2; "
        "otherwise not supported. The relative difference is the estimate divided by |the other "
        "policy's window mean| (for (d)/(e): by its distance from the target).",
    ]
    if (claims["claim"] == CLAIM_TEXT["f"]).any():
        lines += [
            "",
            "Claim (f) is a claim of no difference: it is 'supported' when |z| < 2. With many "
            "paths even a practically negligible difference becomes significant, so judge a "
            "'not supported' by its relative difference (a few per cent is similar performance "
            "in practice). For skill_diff, whose mean is near 0 in the middle case, the relative "
            "difference is unstable; compare the estimate with the window table instead.",
        ]
    return lines


def _case_description(study: PaperStudy) -> str:
    means = "the means the true skills are drawn around" if study.equal_priors else "prior mean"
    if study.case == "top":
        return f"player 0 ranks 1 of {study.n_players} by {means}"
    if study.case == "bottom":
        return f"player 0 ranks {study.n_players} of {study.n_players} by {means}"
    return f"player 0 ranks {study.middle_rank} of {study.n_players} by {means}"


def summary_markdown(
    result: PaperResult, claims: pd.DataFrame, *, command: str | None = None
) -> str:
    """Return the text of ``summary.md`` for a result and its evaluated claims."""
    study = result.study
    labels = study.window_labels()
    lines = [
        f"# Paper study, case {study.case}{' (equal priors)' if study.equal_priors else ''}",
        "",
        "The single-player match-making study of Ryzhov, Tariq & Powell (2011), Section 4: "
        "player 0 plays N games, each against the opponent a policy picks from the current "
        "beliefs.",
        "",
        "## Set-up",
        "",
        f"- case: {study.case} ({_case_description(study)})",
        "- equal priors: "
        + (
            "yes (every prior mean 0; the true skills are drawn around the original means)"
            if study.equal_priors
            else "no"
        ),
        f"- sample paths: {result.paths}",
        f"- seed: {result.seed}",
        f"- games per path N: {study.n_games}",
        f"- players: {study.n_players}; performance-noise variance sigma_eps^2 = {study.beta2:g}",
        f"- policies: {', '.join(result.policies)}",
        f"- windows: {', '.join(labels)} (early = {labels[0]}, late = {labels[-1]})",
    ]
    if command:
        lines.append(f"- reproduce: `{command}`")
    lines += [
        "",
        "## Figures",
        "",
        "Lines: per-game means over paths; shaded bands: ±1 standard error over paths; dotted "
        "verticals: window boundaries. The win rate is noisy per game, so its panel shows the "
        f"per-game mean as a thin line and a {MOVING_AVERAGE_GAMES}-game trailing moving average "
        "as a thick line; dashed lines mark the ideal 0.5 win rate and 0 skill difference.",
        "",
        "![overview](overview.png)",
        "",
        " · ".join(f"[{metric}]({metric}.png)" for metric in METRICS),
        "",
        "## Window averages",
        "",
        "Mean ± standard error over paths of each path's window average.",
        "",
        *_windows_table(result.windows, "mean"),
        "",
    ]
    if (result.windows["kind"] == "paired_difference").any():
        lines += [
            "## Paired differences",
            "",
            "KG - other on the same paths (common random numbers), mean ± standard error.",
            "",
            *_windows_table(result.windows, "paired_difference"),
            "",
        ]
    lines += _claims_section(result, claims)
    lines += [
        "",
        "## Files",
        "",
        "- `per_game.csv`: per policy and game, the metrics' means over paths and `_se` columns",
        "- `windows.csv`: window averages (`kind = mean`) and paired differences",
        "- `claims.csv`: the claims above, one row per claim and comparison",
        "",
    ]
    return "\n".join(lines)


def write_report(result: PaperResult, out_dir: Path, *, command: str | None = None) -> list[Path]:
    """Write the report of a study into ``out_dir`` (created if missing).

    Args:
        result: the study's result.
        out_dir: the folder to write into.
        command: the command that reproduces the run, quoted in ``summary.md`` if given.

    Returns:
        The files written: ``per_game.csv``, ``windows.csv``, ``claims.csv``, the four metric
        figures, ``overview.png`` and ``summary.md``.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    per_game = out_dir / "per_game.csv"
    result.per_game.to_csv(per_game, index=False)
    windows = out_dir / "windows.csv"
    result.windows.to_csv(windows, index=False)
    claims = evaluate_claims(result)
    claims_path = out_dir / "claims.csv"
    claims.to_csv(claims_path, index=False)
    written += [per_game, windows, claims_path]
    written += write_figures(result, out_dir)
    summary = out_dir / "summary.md"
    summary.write_text(summary_markdown(result, claims, command=command), encoding="utf-8")
    written.append(summary)
    return written


# --------------------------------------------------------------------------------------------
# The `lobbysim paper` library call


class PaperArgumentError(ValueError):
    """An argument of :func:`run_paper` that cannot be used.

    ``str(error)`` is ``"<argument> <message>"``, the message naming the value received.

    Attributes:
        argument: the argument's name (``"paths"``, ``"out"``, ...).
        value: the value received.
    """

    def __init__(self, argument: str, value: object, message: str) -> None:
        self.argument = argument
        self.value = value
        super().__init__(f"{argument} {message}")


def paper_windows(n_games: int) -> tuple[tuple[int, int], ...]:
    """Return the three windows for N games: the paper's 1-100, 101-200, 201-N for N >= 500.

    For fewer games the windows scale: the first fifth, the second fifth and the rest (each at
    least one game, so N >= 3).
    """
    if n_games < 3:
        raise ValueError(f"n_games must be >= 3 for three windows, got {n_games}")
    if n_games >= 500:
        first, second = 100, 200
    else:
        first = max(1, n_games // 5)
        second = min(max(first + 1, 2 * n_games // 5), n_games - 1)
    return ((1, first), (first + 1, second), (second + 1, n_games))


def default_out_dir(case: str, equal_priors: bool, now: datetime | None = None) -> Path:
    """Return ``outputs/paper-<case>[-equal]-<UTC YYYYmmdd-HHMMSS>``."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    return Path("outputs") / f"paper-{case}{'-equal' if equal_priors else ''}-{stamp}"


def paper_command(
    case: str, *, equal_priors: bool, paths: int, seed: int, policies: Sequence[str], games: int
) -> str:
    """Return the ``lobbysim paper`` command that reproduces a run (any --out, any --jobs)."""
    words = ["lobbysim", "paper", "--case", case]
    if equal_priors:
        words.append("--equal-priors")
    words += ["--paths", str(paths), "--seed", str(seed), "--policies", ",".join(policies)]
    words += ["--games", str(games)]
    return shlex.join(words)


@dataclass(frozen=True)
class PaperRun:
    """Validated arguments of :func:`run_paper`."""

    study: PaperStudy
    policies: tuple[str, ...]
    paths: int
    seed: int
    jobs: int
    out: Path


def _check_out(out: Path) -> None:
    if out.exists():
        if not out.is_dir():
            raise PaperArgumentError("out", out, f"{out} exists and is not a folder")
        if any(out.iterdir()):
            raise PaperArgumentError(
                "out", out, f"{out} exists and is not empty; refusing to write into it"
            )


def validate_paper_arguments(
    case: str,
    *,
    equal_priors: bool = False,
    paths: int = 1000,
    seed: int = 0,
    policies: Sequence[str] = DEFAULT_POLICIES,
    games: int = 500,
    jobs: int | None = None,
    out: Path | str | None = None,
) -> PaperRun:
    """Check the arguments of :func:`run_paper` without running or writing anything.

    Raises:
        PaperArgumentError: a bad case, paths < 2, games < 3, jobs < 1, seed < 0, no policies or
            a non-empty ``out``.
        lobbysim.registry.PluginError: an unknown policy name (with a "did you mean").
    """
    if case not in CASES:
        raise PaperArgumentError("case", case, f"must be one of {', '.join(CASES)}, got {case!r}")
    if paths < 2:
        raise PaperArgumentError(
            "paths", paths, f"must be >= 2 (standard errors need two paths), got {paths}"
        )
    if games < 3:
        raise PaperArgumentError(
            "games", games, f"must be >= 3 (three windows of games), got {games}"
        )
    if seed < 0:
        raise PaperArgumentError("seed", seed, f"must be >= 0, got {seed}")
    if jobs is None:
        jobs = default_jobs()
    if jobs < 1:
        raise PaperArgumentError("jobs", jobs, f"must be >= 1, got {jobs}")
    names = tuple(dict.fromkeys(name.strip() for name in policies if name.strip()))
    if not names:
        raise PaperArgumentError(
            "policies", policies, f"must name at least one policy, got {','.join(policies)!r}"
        )
    for name in names:
        POLICIES.get(name)
    out_path = Path(out) if out is not None else default_out_dir(case, equal_priors)
    _check_out(out_path)
    study = PaperStudy(
        case=case, equal_priors=equal_priors, n_games=games, windows=paper_windows(games)
    )
    return PaperRun(study, names, paths, seed, jobs, out_path)


def run_paper(
    case: str,
    *,
    equal_priors: bool = False,
    paths: int = 1000,
    seed: int = 0,
    policies: Sequence[str] = DEFAULT_POLICIES,
    games: int = 500,
    jobs: int | None = None,
    out: Path | str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Run the paper's study and write its report atomically; return the output folder.

    Everything is validated before anything runs or is written. The report goes into a temporary
    sibling folder ``<out>.tmp-<pid>`` that is renamed to ``out`` when complete and removed on any
    error or interrupt, so ``out`` either holds a whole report or does not exist.

    Args:
        case: ``"top"``, ``"bottom"`` or ``"middle"``.
        equal_priors: start every prior mean at 0.
        paths: sample paths (>= 2).
        seed: the master seed (>= 0).
        policies: registered policy names.
        games: N, games per path (>= 3); the windows follow :func:`paper_windows`.
        jobs: worker processes (default: the CPUs available); the results do not depend on it.
        out: the output folder, new or empty (default: :func:`default_out_dir`).
        progress: passed to :func:`lobbysim.paper.run_study`.

    Raises:
        PaperArgumentError, lobbysim.registry.PluginError: see :func:`validate_paper_arguments`.
    """
    run = validate_paper_arguments(
        case,
        equal_priors=equal_priors,
        paths=paths,
        seed=seed,
        policies=policies,
        games=games,
        jobs=jobs,
        out=out,
    )
    command = paper_command(
        case,
        equal_priors=equal_priors,
        paths=run.paths,
        seed=run.seed,
        policies=run.policies,
        games=games,
    )
    result = run_study(
        run.study, run.policies, run.paths, run.seed, jobs=run.jobs, progress=progress
    )
    run.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = run.out.with_name(f"{run.out.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        tmp.mkdir()
        write_report(result, tmp, command=command)
        _check_out(run.out)  # still new or empty after the run
        if run.out.exists():
            run.out.rmdir()  # empty; os.replace onto a directory is not portable
        os.replace(tmp, run.out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return run.out
