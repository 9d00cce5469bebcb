"""The SimPy processes of the lobby (no file I/O here): see :mod:`lobbysim.sim.lobby`."""

from lobbysim.sim.lobby import LobbySimulation

__all__ = ["LobbySimulation"]
