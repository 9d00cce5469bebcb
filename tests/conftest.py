"""Test-wide settings: Hypothesis profiles.

The property tests explore new random examples on every run (the default profile), which is how
they find edge cases. CI runs them derandomized (``HYPOTHESIS_PROFILE=ci``, set by ``.ci/run``),
so that a submission lands or fails on its own code, not on the luck of the draw; a case found on
a developer's run becomes a regression test of its own.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
