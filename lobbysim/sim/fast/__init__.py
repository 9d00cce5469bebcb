"""The lobby's speed kernels: functions and small classes over plain values, never a role class.

Each kernel gives, bit for bit, what a general path of the engine gives where it applies, and the
run's :class:`~lobbysim.sim.fast.plan.FastPlan`, decided once from what the plug-ins declare,
says where. ``FastPlan.off()`` switches them all off (tests/sim/test_fast_paths.py runs every
bundled scenario both ways).

* :mod:`~lobbysim.sim.fast.small_pass`: small 1v1 pools paired on floats (reference: the global
  assignment's pairs over the pool's arrays).
* :mod:`~lobbysim.sim.fast.duels`: 1v1 games' ends as queue entries, rated as they end, and their
  scores on floats (reference: the array scoring of :class:`~lobbysim.sim.games.Games`).
* :mod:`~lobbysim.sim.fast.backfill`: a back-fill pass on lists (reference:
  :meth:`~lobbysim.sim.open_seats.OpenSeats.backfill` on arrays).
* :mod:`~lobbysim.sim.fast.events`: the only code that poses as SimPy events or reads SimPy's
  private state (the doorbell's rings, tick moments, queue entries).
* :mod:`~lobbysim.sim.fast.plan`: the plan itself.

A kernel imports only :mod:`lobbysim.sim.entities`, other kernels and the layers below the
engine (tests/test_layers.py checks).
"""
