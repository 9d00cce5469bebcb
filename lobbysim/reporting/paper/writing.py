"""Writing a study's report: the CSV files, the figures and the Markdown ``summary.md``.

Part of :mod:`lobbysim.reporting.paper` (no simulation): :func:`write_report` turns a
:class:`~lobbysim.paper.PaperResult` into ``per_game.csv``, ``windows.csv``, ``claims.csv``, the
figures of :mod:`lobbysim.reporting.paper.figures` and ``summary.md``.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from lobbysim.paper import METRICS, PaperResult, PaperStudy
from lobbysim.reporting.paper.claims import CLAIM_TEXT, KG, evaluate_claims
from lobbysim.reporting.paper.figures import MOVING_AVERAGE_GAMES, write_figures


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
