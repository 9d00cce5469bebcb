"""Match logs made by hand for the calibration tests (not a test module: pytest collects only
``test_*.py``): :func:`make_log` from matches given as (start, end, seats), :func:`random_log` a
small log with overlapping matches, equal times, draws and mixed kinds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lobbysim.calibration.matchlog import MatchLog, check_seats

Match = tuple[float, float, list[tuple[int, int, int]]]
"""A match: start, end, and its seats (player, side, rank)."""


def make_log(matches: list[Match], source: str = "hand") -> MatchLog:
    """Return a MatchLog of ``matches`` (given in any order; players by their own ids)."""
    order = sorted(range(len(matches)), key=lambda k: (matches[k][0], k))
    rows = []
    for code, k in enumerate(order):
        start, end, seats = matches[k]
        rows += [(code, pid, start, end, side, rank) for pid, side, rank in seats]
    seats_frame = pd.DataFrame(rows, columns=["match", "pid", "start", "end", "side", "rank"])
    seats_frame = seats_frame.sort_values(["start", "match", "side", "pid"], kind="stable")
    first = pd.unique(seats_frame["pid"].to_numpy())
    code_of = {pid: c for c, pid in enumerate(first.tolist())}
    seats_frame["pid"] = seats_frame["pid"].map(code_of)
    seats_frame = seats_frame.rename(columns={"pid": "player"})
    dtypes = {"match": "int64", "player": "int64", "start": "float64", "end": "float64"}
    seats_frame = seats_frame.astype({**dtypes, "side": "int64", "rank": "int64"})
    seats_frame = seats_frame.sort_values(["start", "match", "side", "player"]).reset_index(
        drop=True
    )
    assert check_seats(seats_frame) == []
    return MatchLog(seats_frame, np.array(order), np.asarray(first), source=source)


def random_log(
    rng: np.random.Generator,
    matches: int = 80,
    players: int = 12,
    *,
    kinds: tuple[str, ...] = ("1v1", "2v2", "ffa"),
    zero_length: bool = False,
) -> MatchLog:
    """Return a small log with overlapping matches, equal times, draws and mixed kinds."""
    out: list[Match] = []
    for _ in range(matches):
        start = float(rng.integers(0, 60))
        end = start + (0.0 if zero_length and rng.random() < 0.2 else float(rng.integers(1, 8)))
        kind = kinds[int(rng.integers(len(kinds)))]
        size = {"1v1": 2, "2v2": 4, "ffa": 4}[kind]
        who = rng.choice(players, size, replace=False).tolist()
        if kind == "1v1":
            ranks = [0, 0] if rng.random() < 0.15 else rng.permutation(2).tolist()
            seats = [(who[0], 0, ranks[0]), (who[1], 1, ranks[1])]
        elif kind == "2v2":
            ranks = [0, 0] if rng.random() < 0.15 else rng.permutation(2).tolist()
            seats = [(p, k // 2, ranks[k // 2]) for k, p in enumerate(who)]
        else:
            ranks = rng.integers(0, 3, size).tolist()  # ties in places: drawn pairs
            seats = [(p, k, ranks[k]) for k, p in enumerate(who)]
        out.append((start, end, seats))
    return make_log(out, source="random")
