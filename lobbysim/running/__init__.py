"""Running work: tasks in worker processes (:mod:`~lobbysim.running.workers`), progress on a
terminal, in a notebook or a log (:mod:`~lobbysim.running.progress`), the time left of a stage of
runs (:mod:`~lobbysim.running.time_left`) and the interpreter's settings for a run
(:mod:`~lobbysim.running.interpreter`).
"""
