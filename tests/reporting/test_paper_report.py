"""The paper study's report: files written, claims on hand-made results, windows, formatting."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lobbysim.commands.paper import paper_windows
from lobbysim.paper import METRICS, PaperResult, PaperStudy, run_study
from lobbysim.reporting.paper import (
    CLAIM_COLUMNS,
    CLAIM_TEXT,
    applicable_claims,
    distance_difference,
    evaluate_claims,
    format_estimate,
    write_report,
)

POLICIES = ["point_estimate", "draw_chance", "knowledge_gradient"]
KG = "knowledge_gradient"
FIGURES = ["draw_prob_true.png", "sq_error.png", "skill_diff.png", "win.png", "overview.png"]


# --------------------------------------------------------------------------------------------
# A small real run and its report


@pytest.fixture(scope="module")
def small_result() -> PaperResult:
    study = PaperStudy(case="top", n_games=40, windows=paper_windows(40))
    return run_study(study, POLICIES, paths=20, seed=3)


@pytest.fixture(scope="module")
def report(small_result: PaperResult, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "top"
    written = write_report(small_result, out, command="lobbysim paper --case top --paths 20")
    assert sorted(p.name for p in written) == sorted(
        ["per_game.csv", "windows.csv", "claims.csv", "summary.md", *FIGURES]
    )
    assert all(p.parent == out for p in written)
    return out


def test_report_writes_every_file(report: Path) -> None:
    names = {p.name for p in report.iterdir()}
    assert names == {"per_game.csv", "windows.csv", "claims.csv", "summary.md", *FIGURES}


def test_per_game_csv_has_the_columns_and_n_rows_per_policy(report: Path) -> None:
    frame = pd.read_csv(report / "per_game.csv")
    assert list(frame.columns) == [
        "policy",
        "game",
        *METRICS,
        *(f"{metric}_se" for metric in METRICS),
    ]
    assert frame.groupby("policy").size().to_dict() == {name: 40 for name in POLICIES}
    for name in POLICIES:
        assert frame.loc[frame["policy"] == name, "game"].tolist() == list(range(1, 41))


def test_windows_csv_has_means_and_paired_differences(report: Path) -> None:
    frame = pd.read_csv(report / "windows.csv")
    means = frame[frame["kind"] == "mean"]
    paired = frame[frame["kind"] == "paired_difference"]
    assert set(means["policy"]) == set(POLICIES)
    assert set(paired["policy"]) == {f"{KG} - point_estimate", f"{KG} - draw_chance"}
    assert set(frame["window"]) == {"1-8", "9-16", "17-40"}
    assert len(frame) == 3 * 3 + 2 * 3


@pytest.mark.parametrize("name", FIGURES)
def test_figures_are_png_files(report: Path, name: str) -> None:
    data = (report / name).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 20_000  # a real plot at 150 dpi, not an empty canvas


def test_summary_lists_every_claim_with_its_verdict(
    report: Path, small_result: PaperResult
) -> None:
    text = (report / "summary.md").read_text(encoding="utf-8")
    assert "`lobbysim paper --case top --paths 20`" in text
    assert "![overview](overview.png)" in text
    for metric in METRICS:
        assert f"({metric}.png)" in text
    claim_lines = [line for line in text.splitlines() if line.startswith("- **(")]
    claims = evaluate_claims(small_result)
    assert len(claims) == 5 * 2  # (a)-(e) for the top case, KG against two others
    assert len(claim_lines) == len(claims)
    for line, row in zip(claim_lines, claims.itertuples(index=False), strict=True):
        assert line.startswith(f"- **{row.claim}**: {row.comparison}, window {row.window}")
        assert line.endswith(f"→ **{row.verdict}**")
        assert f"z = {row.z:.2f}" in line
    assert "How z was computed" in text


def test_claims_csv_matches_evaluate_claims(report: Path, small_result: PaperResult) -> None:
    written = pd.read_csv(report / "claims.csv")
    expected = evaluate_claims(small_result)
    assert list(written.columns) == CLAIM_COLUMNS
    pd.testing.assert_frame_equal(written, expected, check_exact=False, rtol=1e-12)


def test_real_claims_are_consistent_with_the_windows_table(small_result: PaperResult) -> None:
    claims = evaluate_claims(small_result)
    row = claims[(claims["claim"] == CLAIM_TEXT["a"]) & (claims["comparison"].str.endswith("ce"))]
    paired = small_result.windows[
        (small_result.windows["policy"] == f"{KG} - draw_chance")
        & (small_result.windows["window"] == "1-8")
    ].iloc[0]
    assert row["estimate"].item() == paired["draw_prob_true"]
    assert row["z"].item() == pytest.approx(paired["draw_prob_true"] / paired["draw_prob_true_se"])


# --------------------------------------------------------------------------------------------
# Hand-made results with known numbers


def hand_made(
    case: str = "top",
    *,
    equal_priors: bool = False,
    policies: list[str] | None = None,
    paths: int = 4,
) -> PaperResult:
    """A result with windows 1-2, 3-4, 5-10; every metric 0.1 +- 0.01 until a test sets it."""
    names = list(POLICIES if policies is None else policies)
    study = PaperStudy(
        case=case, equal_priors=equal_priors, n_games=10, windows=((1, 2), (3, 4), (5, 10))
    )
    rows = []
    labels = study.window_labels()
    kinds = [("mean", name) for name in names]
    if KG in names:
        kinds += [("paired_difference", f"{KG} - {n}") for n in names if n != KG]
    for kind, label in kinds:
        for window in labels:
            row: dict[str, object] = {"kind": kind, "policy": label, "window": window}
            row.update({metric: 0.1 for metric in METRICS})
            row.update({f"{metric}_se": 0.01 for metric in METRICS})
            rows.append(row)
    windows = pd.DataFrame(rows)
    per_game = pd.DataFrame(columns=["policy", "game", *METRICS, *(f"{m}_se" for m in METRICS)])
    path_windows = {name: np.full((paths, 3, len(METRICS)), 0.5) for name in names}
    return PaperResult(study, 0, paths, names, per_game, windows, path_windows)


def set_window(
    result: PaperResult, kind: str, policy: str, window: str, metric: str, value: float, se: float
) -> None:
    frame = result.windows
    where = (frame["kind"] == kind) & (frame["policy"] == policy) & (frame["window"] == window)
    assert where.sum() == 1
    frame.loc[where, metric] = value
    frame.loc[where, f"{metric}_se"] = se


def claim_rows(claims: pd.DataFrame, letter: str) -> pd.DataFrame:
    return claims[claims["claim"] == CLAIM_TEXT[letter]].set_index("comparison")


@pytest.mark.parametrize(
    ("diff", "se", "verdict"),
    [
        (0.02, 0.005, "supported"),  # z = +4, the claimed direction
        (0.02, 0.01, "supported"),  # z = +2 exactly: the boundary counts
        (0.015, 0.01, "not supported"),  # z = +1.5
        (-0.015, 0.01, "not supported"),  # z = -1.5
        (-0.03, 0.01, "contradicted"),  # z = -3, against the claim
    ],
)
def test_claim_c_uses_the_late_paired_difference(diff: float, se: float, verdict: str) -> None:
    result = hand_made()
    set_window(
        result, "paired_difference", f"{KG} - point_estimate", "5-10", "draw_prob_true", diff, se
    )
    set_window(result, "mean", "point_estimate", "5-10", "draw_prob_true", 0.125, 0.004)
    # The early window and the other comparison must not leak into this row.
    set_window(result, "paired_difference", f"{KG} - point_estimate", "1-2", "draw_prob_true", 9, 1)
    rows = claim_rows(evaluate_claims(result), "c")
    assert list(rows.index) == [f"{KG} vs point_estimate", f"{KG} vs draw_chance"]
    row = rows.loc[f"{KG} vs point_estimate"]
    assert row["window"] == "5-10"
    assert row["estimate"] == diff
    assert row["se"] == se
    assert row["z"] == pytest.approx(diff / se)
    assert row["verdict"] == verdict
    assert row["relative_difference"] == pytest.approx(diff / 0.125)
    assert rows.loc[f"{KG} vs draw_chance", "z"] == pytest.approx(10.0)  # 0.1 / 0.01


def test_claim_a_and_b_use_the_early_window_and_expect_negative() -> None:
    result = hand_made()
    set_window(
        result, "paired_difference", f"{KG} - draw_chance", "1-2", "draw_prob_true", -0.05, 0.01
    )
    set_window(result, "paired_difference", f"{KG} - draw_chance", "1-2", "sq_error", 0.3, 0.1)
    claims = evaluate_claims(result)
    a = claim_rows(claims, "a").loc[f"{KG} vs draw_chance"]
    b = claim_rows(claims, "b").loc[f"{KG} vs draw_chance"]
    assert (a["window"], a["z"], a["verdict"]) == ("1-2", pytest.approx(-5.0), "supported")
    assert (b["window"], b["z"], b["verdict"]) == ("1-2", pytest.approx(3.0), "contradicted")


def test_claim_d_uses_the_sign_of_each_policys_distance_from_one_half() -> None:
    result = hand_made()
    late, win = 2, METRICS.index("win")
    kg = np.array([0.58, 0.60, 0.62, 0.60])  # mean 0.60: 0.10 above one half
    pe = np.array([0.35, 0.36, 0.34, 0.35])  # mean 0.35: 0.15 below one half
    dc = np.array([0.45, 0.55, 0.50, 0.60])  # mean 0.525: 0.025 above
    result.path_windows[KG][:, late, win] = kg
    result.path_windows["point_estimate"][:, late, win] = pe
    result.path_windows["draw_chance"][:, late, win] = dc
    # Another window must not matter.
    result.path_windows[KG][:, 0, win] = 1.0
    rows = claim_rows(evaluate_claims(result), "d")

    # KG above, point_estimate below: u = (kg - 0.5) + (pe - 0.5). A sign-blind paired
    # difference kg - pe would give +0.25 and the opposite verdict.
    u = (kg - 0.5) + (pe - 0.5)
    row = rows.loc[f"{KG} vs point_estimate"]
    assert row["window"] == "5-10"
    assert row["estimate"] == pytest.approx(abs(0.60 - 0.5) - abs(0.35 - 0.5))  # -0.05
    assert row["se"] == pytest.approx(u.std(ddof=1) / 2.0)
    assert row["se"] == pytest.approx(math.sqrt(0.0006 / 3) / 2)
    assert row["z"] == pytest.approx(-0.05 / (math.sqrt(0.0006 / 3) / 2))  # about -7.07
    assert row["verdict"] == "supported"
    assert row["relative_difference"] == pytest.approx(-0.05 / 0.15)

    # Both above one half: u = (kg - 0.5) - (dc - 0.5) = kg - dc; KG is farther away.
    u = kg - dc
    row = rows.loc[f"{KG} vs draw_chance"]
    assert row["estimate"] == pytest.approx(0.10 - 0.025)
    assert row["se"] == pytest.approx(u.std(ddof=1) / 2.0)
    assert row["z"] == pytest.approx(0.075 / (u.std(ddof=1) / 2.0))  # about +2.44
    assert row["verdict"] == "contradicted"


def test_claim_e_is_the_same_construction_with_target_zero() -> None:
    result = hand_made()
    late, diff = 2, METRICS.index("skill_diff")
    kg = np.array([-0.1, 0.1, -0.2, 0.0])  # mean -0.05: below the target 0
    pe = np.array([-1.0, -1.2, -0.8, -1.0])  # mean -1: below, farther
    result.path_windows[KG][:, late, diff] = kg
    result.path_windows["point_estimate"][:, late, diff] = pe
    row = claim_rows(evaluate_claims(result), "e").loc[f"{KG} vs point_estimate"]
    u = -kg + pe  # sgn_KG = sgn_other = -1
    assert row["window"] == "5-10"
    assert row["estimate"] == pytest.approx(0.05 - 1.0)
    assert row["se"] == pytest.approx(u.std(ddof=1) / 2.0)
    assert row["z"] == pytest.approx(-0.95 / (u.std(ddof=1) / 2.0))
    assert row["verdict"] == "supported"
    assert row["relative_difference"] == pytest.approx(-0.95 / 1.0)


def test_distance_difference_counts_a_mean_on_the_target_with_its_variability() -> None:
    estimate, se = distance_difference(np.array([0.4, 0.6]), np.array([0.3, 0.3]), 0.5)
    assert estimate == pytest.approx(0.0 - 0.2)
    assert se > 0  # sgn = +1 for the mean exactly at 0.5, so KG's spread still counts
    with pytest.raises(ValueError, match="paired"):
        distance_difference(np.array([0.4, 0.6]), np.array([0.3]), 0.5)


def test_claim_f_is_supported_without_a_significant_difference() -> None:
    result = hand_made("middle")
    other = f"{KG} - point_estimate"
    set_window(result, "paired_difference", other, "5-10", "draw_prob_true", 0.001, 0.001)
    set_window(result, "paired_difference", other, "5-10", "sq_error", -0.05, 0.01)
    set_window(result, "paired_difference", other, "5-10", "skill_diff", -0.019, 0.01)
    set_window(result, "paired_difference", other, "5-10", "win", 0.0, 0.01)
    set_window(result, "mean", "point_estimate", "5-10", "sq_error", 0.5, 0.02)
    claims = evaluate_claims(result)
    rows = claims[
        (claims["claim"] == CLAIM_TEXT["f"]) & (claims["comparison"] == f"{KG} vs point_estimate")
    ]
    by_metric = {row.statistic.split(":")[0]: row for row in rows.itertuples(index=False)}
    assert set(by_metric) == set(METRICS)
    assert by_metric["draw_prob_true"].verdict == "supported"  # z = 1
    assert by_metric["sq_error"].verdict == "not supported"  # z = -5
    assert by_metric["sq_error"].relative_difference == pytest.approx(-0.05 / 0.5)
    assert by_metric["skill_diff"].verdict == "supported"  # z = -1.9
    assert by_metric["win"].verdict == "supported"  # z = 0
    assert all(row.window == "5-10" for row in by_metric.values())


@pytest.mark.parametrize(
    ("case", "equal_priors", "letters"),
    [
        ("top", False, ["a", "b", "c", "d", "e"]),
        ("bottom", True, ["a", "b", "c", "d", "e"]),
        ("middle", False, ["a", "f"]),
        ("middle", True, ["a", "d", "e", "f"]),
    ],
)
def test_the_claims_that_apply_follow_the_case(
    case: str, equal_priors: bool, letters: list[str]
) -> None:
    result = hand_made(case, equal_priors=equal_priors)
    assert applicable_claims(result.study) == letters
    claims = evaluate_claims(result)
    per_letter = {letter: 4 if letter == "f" else 1 for letter in letters}
    expected = [
        CLAIM_TEXT[letter]
        for letter in letters
        for _ in ("point_estimate", "draw_chance")
        for _ in range(per_letter[letter])
    ]
    assert claims["claim"].tolist() == expected
    assert set(claims["verdict"]) <= {"supported", "not supported", "contradicted"}


def test_claims_skip_absent_policies() -> None:
    without_kg = evaluate_claims(hand_made(policies=["point_estimate", "draw_chance"]))
    assert without_kg.empty
    assert list(without_kg.columns) == CLAIM_COLUMNS
    pair = evaluate_claims(hand_made(policies=["draw_chance", KG]))
    assert set(pair["comparison"]) == {f"{KG} vs draw_chance"}
    assert len(pair) == 5


def test_summary_without_kg_says_no_claim_applies(tmp_path: Path) -> None:
    result = run_study(
        PaperStudy(case="bottom", n_games=5, windows=paper_windows(5)),
        ["point_estimate"],
        paths=3,
        seed=1,
    )
    write_report(result, tmp_path)
    text = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "No claim applies" in text
    assert "## Paired differences" not in text
    assert pd.read_csv(tmp_path / "claims.csv").empty


# --------------------------------------------------------------------------------------------
# Windows and formatting


def test_paper_windows() -> None:
    assert paper_windows(500) == ((1, 100), (101, 200), (201, 500))
    assert paper_windows(800) == ((1, 100), (101, 200), (201, 800))
    assert paper_windows(30) == ((1, 6), (7, 12), (13, 30))
    assert paper_windows(3) == ((1, 1), (2, 2), (3, 3))
    for n in range(3, 700):
        (a0, a1), (b0, b1), (c0, c1) = paper_windows(n)
        assert a0 == 1 and b0 == a1 + 1 and c0 == b1 + 1 and c1 == n
        assert a1 >= a0 and b1 >= b0 and c1 >= c0
        PaperStudy(n_games=n, windows=paper_windows(n))  # accepted by the engine
    with pytest.raises(ValueError, match="n_games must be >= 3"):
        paper_windows(2)


@pytest.mark.parametrize(
    ("value", "se", "text"),
    [
        (0.115957, 0.009717, "0.1160 ± 0.0097"),
        (0.187920, 0.134634, "0.19 ± 0.13"),
        (12.345, 2.5, "12.3 ± 2.5"),
        (-0.0123, 0.0, "-0.0123 ± 0"),
    ],
)
def test_format_estimate(value: float, se: float, text: str) -> None:
    assert format_estimate(value, se) == text
