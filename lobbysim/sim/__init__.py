"""The SimPy model of the lobby (no file I/O here), one class per role.

:mod:`lobbysim.sim.lobby` holds :class:`LobbySimulation`, the façade that builds and wires the
parts: :mod:`~lobbysim.sim.sessions` (the lobby: arrivals, sessions, the queue, reneging),
:mod:`~lobbysim.sim.matchmaker` (passes, ticks, assignment), :mod:`~lobbysim.sim.games` (games,
quits, back-fill, scores) and :mod:`~lobbysim.sim.recorder` (record rows), on the exact-time
events of :mod:`~lobbysim.sim.clock`; :mod:`~lobbysim.sim.entities` holds their plain objects.
"""

from lobbysim.sim.lobby import LobbySimulation

__all__ = ["LobbySimulation"]
