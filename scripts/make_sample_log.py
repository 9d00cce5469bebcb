"""Write the sample match log shipped with lobbysim, made by lobbysim itself.

``lobbysim/scenarios/logs/quickstart_games.csv.gz`` is two days of the bundled ``quickstart``
(a 500-member 1v1 base; seed 1) cut from a running game, as a real log is: the scenario runs
for four days and the log is its days 3 and 4, the times moved back to start at minute 0 (a
log from a run's minute 0 would start with an empty lobby of unrated members, which no real
log does). The games are exported by :func:`lobbysim.calibration.export.records_to_log` in the
default log layout (one row per seat: ``match_id, player_id, start, end, team, result`` in
minutes; the run's own match and player ids). It is the log the README's calibration example
reads; running this script again writes the same rows. Example::

    python scripts/make_sample_log.py
"""

from __future__ import annotations

import gzip
from pathlib import Path

from lobbysim.calibration.export import records_to_log
from lobbysim.experiments.simulation import simulate
from lobbysim.scenario import load_scenario

TARGET = Path(__file__).resolve().parents[1] / "lobbysim" / "scenarios" / "logs"
#: The days the game has run before the log starts, and the log's own days.
LEAD_DAYS, LOG_DAYS = 2, 2


def main() -> None:
    lead = LEAD_DAYS * 1440.0
    scenario = load_scenario("quickstart")
    scenario = scenario.replace(horizon=lead + LOG_DAYS * 1440.0)
    result = simulate(scenario, scenario.seed)
    games = result.games[result.games["start"] >= lead].copy()
    for column in ("start", "end"):
        games[column] = games[column] - lead
    participants = result.participants[result.participants["game_id"].isin(games["game_id"])]
    frame = records_to_log(games, participants, result.players)
    TARGET.mkdir(parents=True, exist_ok=True)
    path = TARGET / "quickstart_games.csv.gz"
    text = frame.to_csv(index=False, float_format="%.6f").encode("utf-8")
    with gzip.GzipFile(path, "wb", mtime=0) as fh:  # mtime 0: the same bytes every time
        fh.write(text)
    print(f"wrote {path}: {len(frame):,} seats, {frame['match_id'].nunique():,} matches")


if __name__ == "__main__":
    main()
