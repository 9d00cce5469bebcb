"""Statistics: the metrics of one replication (:mod:`~lobbysim.stats.metrics`) and the intervals,
p-values and detectable differences over replications (:mod:`~lobbysim.stats.intervals`).
"""
