"""Policy specs: a policy with its parameters written on one line, and the label it goes by.

A spec is a policy's name, ``knowledge_gradient``, or its name with parameters,
``knowledge_gradient(gamma=0.95)`` or ``knowledge_gradient(rule=finite_horizon, horizon=50)``;
each value is read as YAML (numbers, ``true``/``false``, text; a text holding ``,`` ``(`` ``)``
``=`` or spaces goes in quotes). In a scenario file a spec may also be a mapping,
``{name: knowledge_gradient, gamma: 0.95}``, as every plug-in is. :func:`policy_spec` reads one
into a :class:`~lobbysim.scenario.model.PluginSpec`; :func:`split_specs` splits a
``--policies`` option's comma-separated list; :func:`spec_label` gives a spec's canonical text,
which names the policy in every output (tables, figures, the records' folder) and reads back to
the same spec, so that two variants of one policy can be compared side by side;
:func:`record_folders` makes those labels safe folder names.

Only the syntax is checked here; whether the policy exists and takes those parameters is the
registry's to say (:mod:`lobbysim.registry`), when the commands check a run.
"""

from __future__ import annotations

import json
import math
import numbers
import re
from collections.abc import Iterable, Mapping
from typing import Any

from lobbysim.scenario.plugin_spec import PluginSpec
from lobbysim.validation import ScenarioError
from lobbysim.yaml_input import YamlInputError, load_yaml

_KEY = re.compile(r"^[A-Za-z_]\w*$")
_PLAIN_TEXT = re.compile(r"^[A-Za-z_][\w.\-/:]*$")
_FOLDER_UNSAFE = re.compile(r"[^A-Za-z0-9_.=-]+")
_SYNTAX = "expected a policy name or name(key=value, ...)"
_OPEN, _CLOSE = "([{", ")]}"
MAX_FOLDER = 100


def split_specs(text: str) -> list[str]:
    """Split a comma-separated list of specs on the commas outside brackets and quotes.

    ``"draw_chance,knowledge_gradient(gamma=0.95, rule=discounted)"`` gives the two specs; each
    part is stripped (an empty part stays, for the caller to refuse). A sweep's ``--grid`` values
    (``[[0, 0.5]],[[0, 0.3]]``) are split the same way.
    """
    parts, depth, quote, start = [], 0, "", 0
    for i, char in enumerate(text):
        if quote:
            if char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [part.strip() for part in parts]


def _balanced(text: str) -> bool:
    """Return whether the brackets of ``text`` (outside quotes) pair up and its quotes close."""
    stack: list[str] = []
    quote = ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in _OPEN:
            stack.append(_CLOSE[_OPEN.index(char)])
        elif char in _CLOSE and (not stack or stack.pop() != char):
            return False
    return not stack and not quote


def policy_spec(value: Any, where: str = "--policies") -> PluginSpec:
    """Return the policy a spec names: a ``name(key=value, ...)`` text, a mapping with a
    ``name``, or a :class:`PluginSpec`.

    Raises:
        ScenarioError: one line naming ``where`` and the spec: a syntax error, a parameter given
            twice, or a value that is not a spec at all.
    """
    if isinstance(value, PluginSpec):
        return value
    if isinstance(value, Mapping):
        name = value.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ScenarioError(
                f"{where}: a policy given as a mapping needs a 'name', got {value!r}"
            )
        return PluginSpec(name.strip(), {str(k): v for k, v in value.items() if k != "name"})
    if not isinstance(value, str):
        raise ScenarioError(f"{where}: {_SYNTAX} or a mapping with a 'name', got {value!r}")
    return _parse_text(value, where)


def _parse_text(text: str, where: str) -> PluginSpec:
    spec = text.strip()

    def fail(reason: str) -> ScenarioError:
        return ScenarioError(f"{where}: cannot read the policy {text!r}: {reason}; {_SYNTAX}")

    if not spec:
        raise fail("it is empty")
    name, paren, rest = spec.partition("(")
    name = name.strip()
    if not name or any(c in name for c in ",)=\"' \t"):
        raise fail(f"{name!r} is not a policy name" if name else "the name is missing")
    if not paren:
        return PluginSpec(name)
    if not rest.endswith(")"):
        raise fail("the parameters must end with ')'")
    inner = rest[:-1].strip()
    if not _balanced(inner):
        raise fail("its brackets or quotes do not match")
    params: dict[str, Any] = {}
    for item in split_specs(inner) if inner else []:
        key, equals, raw = item.partition("=")
        key = key.strip()
        if not equals:
            raise fail(f"expected key=value, got {item!r}")
        if not _KEY.match(key):
            raise fail(f"{key!r} is not a parameter name")
        if key == "name":
            raise fail("'name' is not a parameter: the policy's name goes before '('")
        if key in params:
            raise fail(f"the parameter {key!r} is given twice")
        if not raw.strip():
            raise fail(f"the parameter {key!r} has no value")
        try:
            params[key] = load_yaml(raw.strip())
        except YamlInputError as exc:
            raise fail(f"cannot read the value of {key!r}: {exc}") from None
    return PluginSpec(name, params)


def _value_text(value: Any) -> str:
    """Return a parameter value as spec text that :func:`policy_spec` reads back to it."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isnan(number):
            return ".nan"
        if math.isinf(number):
            return ".inf" if number > 0 else "-.inf"
        return float.__repr__(number)
    if isinstance(value, str):
        plain = _PLAIN_TEXT.match(value) is not None
        if plain:
            try:
                plain = load_yaml(value) == value
            except YamlInputError:
                plain = False
        return value if plain else json.dumps(value)
    return json.dumps(value, separators=(", ", ": "), default=str)


def spec_label(spec: PluginSpec) -> str:
    """Return a spec's canonical text: ``name``, or ``name(key=value, ...)`` in its parameters'
    order; :func:`policy_spec` reads it back to an equal spec."""
    if not spec.params:
        return spec.name
    inner = ", ".join(f"{key}={_value_text(value)}" for key, value in spec.params.items())
    return f"{spec.name}({inner})"


def record_folders(labels: Iterable[str]) -> dict[str, str]:
    """Return each policy label's folder name: letters, digits and ``_ . = -`` only, at most
    :data:`MAX_FOLDER` characters, never hidden, and distinct even where file systems ignore
    case (a clash gets ``-2``, ``-3``, ... in the order given).

    A registered policy's name is its own folder name: ``draw_chance`` stays ``draw_chance``,
    ``knowledge_gradient(gamma=0.95)`` becomes ``knowledge_gradient-gamma=0.95``.
    """
    folders: dict[str, str] = {}
    taken: set[str] = set()
    for label in labels:
        if label in folders:
            continue
        base = _FOLDER_UNSAFE.sub("-", label).strip("-.")[:MAX_FOLDER].strip("-.") or "policy"
        folder, n = base, 1
        while folder.lower() in taken:
            n += 1
            folder = f"{base}-{n}"
        taken.add(folder.lower())
        folders[label] = folder
    return folders


def resolve_policies(own: PluginSpec, policies: Iterable[Any], where: str) -> list[PluginSpec]:
    """Return the specs of ``policies``, in order.

    A bare name equal to the name of the scenario's own policy ``own`` stands for that policy
    as the scenario gives it (with its parameters, whose label then shows them); any other
    bare name is the policy with its default parameters, and a spec with parameters is exactly
    that. ``where`` names the list in errors (``--policies``, ``compare.policies``).

    Raises:
        ScenarioError: a spec that cannot be read (see :func:`policy_spec`), or one policy given
            twice: two specs that resolve to the same policy and parameters (``draw_chance,
            draw_chance``; ``kg(a=1, b=2)`` and ``kg(b=2, a=1)``; the own policy's bare name
            and its spec), which would silently run once.
    """
    specs: list[PluginSpec] = []
    given: list[str] = []
    for value in policies:
        spec = policy_spec(value, where)
        if not spec.params and spec.name == own.name:
            spec = own
        text = value.strip() if isinstance(value, str) else spec_label(policy_spec(value, where))
        if spec in specs:
            first = given[specs.index(spec)]
            label = spec_label(specs[specs.index(spec)])
            shown = f"'{label}'"
            if not first == text == label:
                shown += f" (as {first!r} and {text!r})"
            raise ScenarioError(
                f"{where}: the policy {shown} is given twice; give each policy once"
            )
        specs.append(spec)
        given.append(text)
    return specs
