"""lobbysim: a discrete-event simulator of an online-game matchmaking lobby.

The package is organised by concern (see DESIGN.md, section 2): ``lobbysim.skill`` holds the rating
math of the two source documents (no SimPy), ``lobbysim.policies`` the opponent-selection rules,
``lobbysim.paper`` the vectorised engine for the paper's simulation study and ``lobbysim.cli`` the
``lobbysim`` command.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("lobbysim")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
