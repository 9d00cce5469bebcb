"""The players: who arrives (:mod:`~lobbysim.players.arrivals`), who they are
(:mod:`~lobbysim.players.population`), when a member of a base comes back
(:mod:`~lobbysim.players.visits`), whether they stay (:mod:`~lobbysim.players.retention`) and how
far they sit from each data centre (:mod:`~lobbysim.players.latency`). The lobby runs these models
(lobbysim/sim/); a scenario names them.
"""
