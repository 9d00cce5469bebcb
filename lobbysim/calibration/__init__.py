"""``lobbysim calibrate``: a scenario fitted to a game's own match log, and raters scored on it.

:mod:`lobbysim.calibration.matchlog` is the normalised log every reader produces.
"""
