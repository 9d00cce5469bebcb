"""``lobbysim tune``: the best setting of a scenario within constraints, found by simulation.

:mod:`lobbysim.tune.space` reads a study's definition (the fields searched, the objective, the
constraints); :mod:`lobbysim.tune.study` runs it on common random numbers with racing, resumably,
and re-evaluates the best candidate on fresh seeds.
"""
