"""Write the sample match log shipped with lobbysim, made by lobbysim itself.

``lobbysim/scenarios/logs/quickstart_games.csv.gz`` is the first replication of the bundled
``quickstart`` (seed 1: two days of a 500-member 1v1 base), its games exported by
:func:`lobbysim.calibration.export.records_to_log` in the default log layout (one row per seat:
``match_id, player_id, start, end, team, result`` in minutes). It is the log the README's
calibration example reads; running this script again writes the same rows. Example::

    python scripts/make_sample_log.py
"""

from __future__ import annotations

import gzip
from pathlib import Path

from lobbysim.calibration.export import records_to_log
from lobbysim.experiments.simulation import simulate
from lobbysim.scenario import load_scenario

TARGET = Path(__file__).resolve().parents[1] / "lobbysim" / "scenarios" / "logs"


def main() -> None:
    scenario = load_scenario("quickstart")
    result = simulate(scenario, scenario.seed)
    frame = records_to_log(result.games, result.participants, result.players)
    TARGET.mkdir(parents=True, exist_ok=True)
    path = TARGET / "quickstart_games.csv.gz"
    text = frame.to_csv(index=False, float_format="%.6f").encode("utf-8")
    with gzip.GzipFile(path, "wb", mtime=0) as fh:  # mtime 0: the same bytes every time
        fh.write(text)
    print(f"wrote {path}: {len(frame):,} seats, {frame['match_id'].nunique():,} matches")


if __name__ == "__main__":
    main()
