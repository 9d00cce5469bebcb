"""Reporting: every report lobbysim writes, built from one document model. No simulation here.

Shared parts:

- :mod:`lobbysim.stats.intervals` (a foundation, also used by
  :mod:`lobbysim.experiments.replications`): every confidence interval and standard error;
- :mod:`~lobbysim.reporting.document`: the content blocks, number formatting, and the one
  Markdown and one HTML renderer;
- :mod:`~lobbysim.reporting.figures`: saving figures, policy colours, common axes styling;
- :mod:`~lobbysim.reporting.verdicts`: which way a metric is better and the verdict wording.

The reports:

- :mod:`~lobbysim.reporting.run` (figures in :mod:`~lobbysim.reporting.run_figures`): the report
  of a run or a policy comparison, opening with its headline
  (:mod:`~lobbysim.reporting.headline`, also printed by ``lobbysim run`` and ``compare``) and
  the trade-off figure (:mod:`~lobbysim.reporting.tradeoff_figure`);
- :mod:`~lobbysim.reporting.sweep` (data in :mod:`~lobbysim.reporting.sweep_summary`, figures in
  :mod:`~lobbysim.reporting.sweep_figures`): the trade-off report of a parameter sweep;
- :mod:`lobbysim.reporting.paper`: the report of the paper's simulation study (its command,
  ``lobbysim paper``, is :mod:`lobbysim.commands.paper`).
"""
