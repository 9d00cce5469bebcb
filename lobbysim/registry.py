"""Name -> class registries for the plug-in families (policies, arrival models, raters, ...).

A registry is built from the classes themselves (``@REGISTRY.register``), never from a parallel list
of names. A name is either a registered one (``"knowledge_gradient"``) or a user class given as
``"package.module:Class"``. A plug-in declares its parameters as the fields of a dataclass; they are
checked here (unknown names get a "did you mean") and by the class's own ``__post_init__``.

The engine calls a plug-in's verbs through :class:`PluginRef`, so that a user class that raises
or calls ``sys.exit`` (at import, in its constructor or in a verb) stops the run with one line
naming it, never a traceback or a silent exit; ``KeyboardInterrupt`` is left to stop the run.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Generic, NamedTuple, TypeVar

__all__ = [
    "PluginError",
    "PluginRef",
    "Registry",
    "declared_parameters",
    "did_you_mean",
    "failure_text",
]

T = TypeVar("T")


class PluginError(ValueError):
    """A plug-in name or parameter that cannot be used; the message names it and says why."""


def failure_text(exc: BaseException) -> str:
    """Return what a plug-in's exception says, on one line: ``"ValueError: the message"``, or
    for a plug-in that called ``sys.exit`` ``"called sys.exit(0)"``."""
    if isinstance(exc, SystemExit):
        return f"called sys.exit({'' if exc.code is None else repr(exc.code)})"
    message = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


class PluginRef(NamedTuple):
    """A plug-in of a run as the messages name it: the scenario field, the family, the name.

    :meth:`call` runs one of the plug-in's verbs so that whatever the plug-in's own code raises,
    an ``Exception`` or a ``SystemExit`` (a ``sys.exit`` in a user class), stops the run with a
    :class:`PluginError` of one line naming the plug-in and the call::

        arrivals: the arrival model 'moody' failed in sample(rng, 0, 40): KeyError: 'no hour'

    ``KeyboardInterrupt`` (Ctrl-C, SIGTERM) is never caught, and a :class:`PluginError` raised
    inside (an engine check of a nested plug-in, which names that one) passes through. Hot paths
    wrap their calls in ``try``/``except`` themselves (free in Python 3.11 until something is
    raised) and build the error with :meth:`failure`.
    """

    field: str  # the scenario field naming the plug-in ("base.retention"); "" for none
    family: str  # "retention model"
    name: str  # as the scenario names it

    def failure(self, call: str, exc: BaseException) -> PluginError:
        """Return the one-line error of ``call`` (``"update(games)"``) having raised ``exc``."""
        where = f"{self.field}: " if self.field else ""
        return PluginError(
            f"{where}the {self.family} '{self.name}' failed in {call}: {failure_text(exc)}"
        )

    def call(self, call: str, verb: Callable[..., T], *args: Any) -> T:
        """Return ``verb(*args)``; what it raises becomes :meth:`failure` of ``call``."""
        try:
            return verb(*args)
        except PluginError:
            raise
        except (Exception, SystemExit) as exc:  # a plug-in's own bug or exit: one line
            raise self.failure(call, exc) from None


def did_you_mean(name: str, options: list[str]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest option to ``name``, or ``""``."""
    close = difflib.get_close_matches(name, options, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def load_object(spec: str) -> Any:
    """Return the object named by ``"package.module:Name"`` or ``"path/to/file.py:Name"``.

    A ``.py`` path is relative to the current folder; it lets a scenario use a class from a file
    that is not an installed package (as in ``examples/``).
    """
    module_name, _, attr = spec.rpartition(":")
    if not module_name or not attr:
        raise PluginError(f"'{spec}' is not of the form 'package.module:Class' or 'file.py:Class'")
    if module_name.endswith(".py"):
        module = _load_file(module_name, spec)
    else:
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise PluginError(f"cannot import module '{module_name}' for '{spec}': {exc}") from None
        except (Exception, SystemExit) as exc:  # the module's own code failed on import
            raise PluginError(
                f"module '{module_name}' failed to load for '{spec}': {failure_text(exc)}"
            ) from None
    try:
        return getattr(module, attr)
    except AttributeError:
        names = [n for n in dir(module) if not n.startswith("_")]
        hint = did_you_mean(attr, names)
        raise PluginError(f"module '{module_name}' has no '{attr}'{hint}") from None


def _load_file(path_text: str, spec: str) -> Any:
    path = Path(path_text)
    if not path.is_file():
        raise PluginError(f"no file '{path_text}' for '{spec}' (relative to {Path.cwd()})")
    name = "lobbysim_user_" + "_".join(path.with_suffix("").parts).replace("-", "_")
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise PluginError(f"cannot load '{path_text}' for '{spec}'")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # not KeyboardInterrupt: Ctrl-C still stops
        del sys.modules[name]
        raise PluginError(
            f"'{path_text}' failed to load for '{spec}': {failure_text(exc)}"
        ) from None
    return module


def declared_parameters(cls: type) -> dict[str, dataclasses.Field[Any]]:
    """Return the parameters a plug-in class declares: its init fields, if it is a dataclass."""
    if not dataclasses.is_dataclass(cls):
        return {}
    return {f.name: f for f in dataclasses.fields(cls) if f.init}


class Registry(Generic[T]):
    """Registered plug-in classes of one family, looked up by name.

    Args:
        family: what the plug-ins are, for messages (``"policy"``).
        required: the attributes every class of the family has (its protocol's methods and
            class attributes); a user class lacking one, e.g. a rater given as a policy, is
            refused when it is looked up.
    """

    def __init__(self, family: str, required: tuple[str, ...] = ()) -> None:
        self.family = family
        self.required = required
        self._classes: dict[str, type[T]] = {}

    def register(self, cls: type[T]) -> type[T]:
        """Class decorator: register ``cls`` under its ``name`` class attribute."""
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name:
            raise TypeError(f"{cls.__qualname__} needs a non-empty class attribute 'name'")
        if name in self._classes:
            raise TypeError(f"{self.family} '{name}' is registered twice")
        missing = self._missing(cls)
        if missing:
            raise TypeError(f"{cls.__qualname__} is not a {self.family}: it lacks {missing}")
        self._classes[name] = cls
        return cls

    def names(self) -> list[str]:
        """Return the registered names, in registration order."""
        return list(self._classes)

    def __iter__(self) -> Iterator[tuple[str, type[T]]]:
        return iter(self._classes.items())

    def __contains__(self, name: object) -> bool:
        return name in self._classes

    def get(self, name: str) -> type[T]:
        """Return the class for a registered name or a ``"package.module:Class"`` string."""
        if ":" in name:
            obj = load_object(name)
            if not isinstance(obj, type):
                raise PluginError(f"{self.family} '{name}' is not a class")
            missing = self._missing(obj)
            if missing:
                raise PluginError(
                    f"'{name}' is not a {self.family}: it lacks {missing} (a {self.family} has "
                    f"{', '.join(self.required)})"
                )
            return obj
        try:
            return self._classes[name]
        except KeyError:
            hint = did_you_mean(name, self.names())
            known = ", ".join(self.names())
            raise PluginError(f"unknown {self.family} '{name}'{hint}; known: {known}") from None

    def _missing(self, cls: type) -> str:
        """Return the required attributes ``cls`` lacks, as text ("" if none)."""
        return ", ".join(attr for attr in self.required if not hasattr(cls, attr))

    def create(self, name: str, params: Mapping[str, Any] | None = None) -> T:
        """Instantiate ``name`` with ``params``, checked against the class's declared parameters."""
        cls = self.get(name)
        params = dict(params or {})
        declared = declared_parameters(cls)
        unknown = [key for key in params if key not in declared]
        if unknown:
            key = unknown[0]
            hint = did_you_mean(key, list(declared))
            allowed = ", ".join(declared) or "none"
            raise PluginError(
                f"{self.family} '{name}' has no parameter '{key}'{hint}; parameters: {allowed}"
            )
        factory: Callable[..., T] = cls
        try:
            return factory(**params)
        except (TypeError, ValueError) as exc:
            raise PluginError(f"{self.family} '{name}': {exc}") from None
        except (Exception, SystemExit) as exc:  # a user class's own bug: name it, no traceback
            raise PluginError(
                f"{self.family} '{name}' failed to start: {failure_text(exc)}"
            ) from None
