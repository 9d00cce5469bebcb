"""Rule sets written for other matchmakers, in and out of lobbysim's rule language.

:mod:`lobbysim.rules.flexmatch` reads an Amazon GameLift FlexMatch rule set (rule language 1.0)
into a scenario's ``matchmaker.rules``, ``attributes`` and ``game`` sections, and writes a
scenario's rule set back as one. The rule language itself is :mod:`lobbysim.scenario.rules`.
"""

from lobbysim.rules.flexmatch_export import export_flexmatch
from lobbysim.rules.flexmatch_read import FlexMatchImport, read_flexmatch

__all__ = ["FlexMatchImport", "export_flexmatch", "read_flexmatch"]
