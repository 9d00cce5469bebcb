"""The SimPy model of the lobby (no file I/O here), one class per role.

:mod:`lobbysim.sim.lobby` holds :class:`LobbySimulation`, the façade that builds and wires the
parts: :mod:`~lobbysim.sim.sessions` (the lobby: arrivals, sessions, the queue, reneging),
:mod:`~lobbysim.sim.matchmaker` (passes, ticks, assignment; with :mod:`~lobbysim.sim.pairing`
for the policy in force and :mod:`~lobbysim.sim.rematch` for the rematch rule),
:mod:`~lobbysim.sim.games` (games, quits, back-fill, scores), :mod:`~lobbysim.sim.recorder`
(record rows) and :mod:`~lobbysim.sim.base` (a persistent player base: members, visits, joining
and leaving), on the exact-time events of :mod:`~lobbysim.sim.clock`;
:mod:`~lobbysim.sim.entities` holds their plain objects.
"""

from lobbysim.sim.lobby import LobbySimulation

__all__ = ["LobbySimulation"]
