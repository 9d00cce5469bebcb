"""The ``lobbysim paper`` command's library call: argument validation, the run and atomic output.

:func:`run_paper` validates every argument first (see :func:`validate_paper_arguments`), runs
:func:`lobbysim.paper.run_study` and writes the report with
:func:`lobbysim.reporting.paper.write_report` into a temporary sibling folder renamed into place
when complete. A command, not reporting: the report itself is :mod:`lobbysim.reporting.paper`.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from lobbysim.paper import CASES, DEFAULT_POLICIES, PaperStudy, default_jobs, run_study
from lobbysim.policies import POLICIES, pairing_of, sees_truth
from lobbysim.records.outputs import out_folder_problem, write_atomically
from lobbysim.reporting.paper import write_report
from lobbysim.validation import format_bytes, memory_budget


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
    problem = out_folder_problem(out)
    if problem is not None:
        raise PaperArgumentError("out", out, problem)


#: Bytes per game of each path of a block a worker simulates at once: the performance noise
#: (2 float64), the four per-game metrics (4 float64) and, at the block's end, two temporaries of
#: the metrics' size for their squared deviations (:func:`lobbysim.paper.study.simulate_block`).
BLOCK_BYTES_PER_PATH_GAME = 8 * (2 + 4 + 2 * 4)
#: Bytes per game of each block's result the parent keeps: the per-game means and squared
#: deviations of the four metrics (``BlockResult.mean``, ``m2``).
RESULT_BYTES_PER_GAME = 8 * 2 * 4
#: Bytes per block of a policy beyond that: its task tuple, the result's objects and arrays.
BYTES_PER_BLOCK = 1_200
#: Bytes per path of a policy: its window means (three windows x four metrics, float64), kept,
#: joined and, for knowledge gradient, differenced.
BYTES_PER_PATH = 3 * 8 * 3 * 4
#: Bytes per game of a policy in the per-game table (ten float64 columns, the policy's name).
TABLE_BYTES_PER_GAME = 150


def study_memory(paths: int, games: int, policies: int, jobs: int) -> float:
    """Return the bytes the paper study needs (an estimate from its arrays, see the constants).

    ``min(jobs, blocks)`` workers each simulate one block of ``min(block_paths, paths)`` paths
    of ``games`` games at once; the parent keeps every block's per-game results, every path's
    window means and the per-game table, per policy.
    """
    block = PaperStudy.block_paths
    blocks = -(-paths // block)
    workers = max(1, min(jobs, blocks * policies))
    return float(
        workers * BLOCK_BYTES_PER_PATH_GAME * games * min(block, paths)
        + policies
        * (
            blocks * (RESULT_BYTES_PER_GAME * games + BYTES_PER_BLOCK)
            + paths * BYTES_PER_PATH
            + games * TABLE_BYTES_PER_GAME
        )
    )


def _check_memory(paths: int, games: int, policies: int, jobs: int) -> None:
    """Refuse a study that needs more memory than :func:`lobbysim.validation.memory_budget`,
    naming ``paths`` or ``games``, whichever would need more on its own (the other cut to its
    default, 1,000 paths or 500 games)."""
    need = study_memory(paths, games, policies, jobs)
    budget, where = memory_budget()
    if need <= budget:
        return
    by_paths = study_memory(paths, min(games, 500), policies, jobs)
    by_games = study_memory(min(paths, 1000), games, policies, jobs)
    argument, value = ("paths", paths) if by_paths >= by_games else ("games", games)
    raise PaperArgumentError(
        argument,
        value,
        f"{value} would need about {format_bytes(need)} of memory ({paths:,} sample paths x "
        f"{games:,} games x {policies} {'policy' if policies == 1 else 'policies'}), more than "
        f"the limit of {format_bytes(budget)}, {where}; use fewer {argument}",
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
        PaperArgumentError: a bad case, paths < 2, games < 3, jobs < 1, seed < 0, no policies,
            more paths or games than fit in memory (:func:`study_memory`) or a non-empty
            ``out``.
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
        cls = POLICIES.get(name)
        if sees_truth(cls) or pairing_of(cls) != "assignment":
            raise PaperArgumentError(
                "policies",
                name,
                f"{name!r} is a lobby baseline (it pairs the whole lobby, or reads true skills); "
                "the paper's study picks one player's opponents from beliefs: use "
                "point_estimate, draw_chance, knowledge_gradient, random or fifo",
            )
    _check_memory(paths, games, len(names), jobs)
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
    try:
        return write_atomically(run.out, lambda tmp: write_report(result, tmp, command=command))
    except FileExistsError as exc:
        raise PaperArgumentError("out", run.out, str(exc)) from None
