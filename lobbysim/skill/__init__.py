"""Rating math of the two source documents: Gaussian (TrueSkill-style) beliefs and the ZoneStats
score-per-hour Elo. Pure numpy/scipy; nothing here imports SimPy or does I/O."""
