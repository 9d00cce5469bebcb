"""The SimPy model of the lobby (no file I/O here), one class per role.

:mod:`lobbysim.sim.lobby` holds :class:`LobbySimulation`, the façade that builds the parts from
the plug-ins of :mod:`~lobbysim.sim.components` (built once, with the run's fast plan) and wires
them through their constructors: :mod:`~lobbysim.sim.sessions` (the lobby: arrivals, sessions,
the queue; it owns :mod:`~lobbysim.sim.reneging`, the patience deadlines),
:mod:`~lobbysim.sim.matchmaker` (passes, ticks, the pool; it owns the pass of its mode,
:mod:`~lobbysim.sim.duel_pass` or :mod:`~lobbysim.sim.group_pass`; with
:mod:`~lobbysim.sim.pairing` for the policy in force, :mod:`~lobbysim.sim.rematch` for the
rematch rule, :mod:`~lobbysim.sim.engagement` for engagement pairing and
:mod:`~lobbysim.sim.rule_pass` for a rule set), :mod:`~lobbysim.sim.games` (1v1 games, scores;
it owns :mod:`~lobbysim.sim.group_games`, team and free-for-all games, which own
:mod:`~lobbysim.sim.open_seats`, their back-fill), :mod:`~lobbysim.sim.recorder` (record rows),
:mod:`~lobbysim.sim.player_base` (a persistent player base: members, visits, joining and
leaving) with :mod:`~lobbysim.sim.retention` (its retention model at work) and
:mod:`~lobbysim.sim.skill_dynamics` (drifting skills, learning newcomers), on the exact-time
events of :mod:`~lobbysim.sim.clock`; :mod:`~lobbysim.sim.entities` holds their plain objects.
The speed kernels, each equal to a general path of these roles, are in :mod:`lobbysim.sim.fast`.
"""

from lobbysim.sim.lobby import LobbySimulation

__all__ = ["LobbySimulation"]
