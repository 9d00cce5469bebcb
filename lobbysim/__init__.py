"""lobbysim: a discrete-event simulator of an online-game matchmaking lobby.

The package is organised in layers (docs/architecture.md): ``lobbysim.skill`` holds the rating
math (no SimPy), ``lobbysim.policies`` the opponent-selection rules, ``lobbysim.sim`` the SimPy
lobby, ``lobbysim.paper`` the vectorised engine for the paper's simulation study and
``lobbysim.cli.main`` the ``lobbysim`` command; docs/model.md has the math.

From Python or a notebook, the package itself is the API (:mod:`lobbysim.api`)::

    import lobbysim

    run = lobbysim.simulate("quickstart", seed=1, horizon=120)
    result = lobbysim.compare("quickstart", ["draw_chance", "knowledge_gradient(gamma=0.95)"])
    rule_sets = lobbysim.compare("flexmatch_5v5", rules=["fair.json", "tight.json"])

``simulate``, ``compare``, ``sweep``, ``tune``, ``calibrate``, ``load_scenario``, ``load_run``
and ``Scenario`` are loaded on first use, so that ``import lobbysim`` stays light.
"""

from importlib.metadata import PackageNotFoundError, version
from typing import Any

try:
    __version__ = version("lobbysim")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0+unknown"

#: The version of lobbysim's results: bumped with every change that alters a simulated result
#: (any record or metric) of some scenario and seed. Sweeps key each run's saved result on it, so
#: results of different versions are never mixed; tests/test_results_version.py fails when results
#: change without a bump.
RESULTS_VERSION = 9

#: The notebook-shaped API, defined in lobbysim.api and loaded on first use.
_API = (
    "Scenario",
    "calibrate",
    "compare",
    "load_run",
    "load_scenario",
    "simulate",
    "sweep",
    "tune",
)

__all__ = ["RESULTS_VERSION", "__version__", *_API]


def __getattr__(name: str) -> Any:
    """Load the API's names (:data:`_API`) from :mod:`lobbysim.api` on first use."""
    if name in _API:
        import lobbysim.api

        value = getattr(lobbysim.api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'lobbysim' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
