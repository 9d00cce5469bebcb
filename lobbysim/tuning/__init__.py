"""``lobbysim tune``: the best setting of a scenario within constraints, found by simulation.

:mod:`lobbysim.tuning.space` reads a study's definition (the fields searched, the objective, the
constraints); :mod:`lobbysim.tuning.study` runs it on common random numbers with racing, resumably,
and re-evaluates the best candidate on fresh seeds.
"""
