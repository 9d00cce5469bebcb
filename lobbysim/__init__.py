"""lobbysim: a discrete-event simulator of an online-game matchmaking lobby.

The package is organised in layers (docs/architecture.md): ``lobbysim.skill`` holds the rating
math (no SimPy), ``lobbysim.policies`` the opponent-selection rules, ``lobbysim.sim`` the SimPy
lobby, ``lobbysim.paper`` the vectorised engine for the paper's simulation study and
``lobbysim.cli`` the ``lobbysim`` command; docs/model.md has the math.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("lobbysim")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0+unknown"

#: The version of lobbysim's results: bumped with every change that alters a simulated result
#: (any record or metric) of some scenario and seed. Sweeps key each run's saved result on it, so
#: results of different versions are never mixed; tests/test_results_version.py fails when results
#: change without a bump.
RESULTS_VERSION = 2

__all__ = ["RESULTS_VERSION", "__version__"]
