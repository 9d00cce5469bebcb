"""What a comparison compares: *variants*, a label and a scenario each, run on the same seeds
(:func:`lobbysim.experiments.replications.run_experiment`).

By default the variants are matchmaking policies (:data:`POLICY`: each the scenario with another
policy, :func:`~lobbysim.experiments.replications.policy_scenarios`); a comparison of FlexMatch
rule sets (:data:`RULE_SET`) has the scenario read with each rule-set file, its own policy for
all (:func:`lobbysim.commands.run_scenario.rule_variants` builds them). The kind is what the
report and headline call the labels: "each rule set minus A" (:data:`PLURALS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from lobbysim.scenario import Scenario

POLICY = "policy"
"""The kind of variant compared by default: matchmaking policies."""

RULE_SET = "rule set"
"""The kind of variant of a comparison of FlexMatch rule sets."""

PLURALS = {POLICY: "policies", RULE_SET: "rule sets"}
"""Each kind of variant and its plural, as the report and headline say them."""


@dataclass(frozen=True)
class Variants:
    """The variants an experiment compares: each label's scenario, in order (the first is the
    baseline), what they are (``kind``: :data:`POLICY` or :data:`RULE_SET`) and, for rule sets,
    each label's rule-set file (``sources``, as given).

    Attributes:
        kind: :data:`POLICY` or :data:`RULE_SET`.
        scenarios: each label's scenario, in order; the first is the baseline.
        sources: with :data:`RULE_SET`, each label's rule-set file (a path).
    """

    kind: str
    scenarios: Mapping[str, Scenario]
    sources: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in PLURALS:
            raise ValueError(f"kind: expected one of {', '.join(PLURALS)}, got {self.kind!r}")
        if not self.scenarios:
            raise ValueError("variants: expected at least one")
