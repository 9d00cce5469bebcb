"""The fast plan of a run: which speed kernels apply, decided once, from what plug-ins declare.

Every kernel in :mod:`lobbysim.sim.fast` gives, bit for bit, what the engine's general path
gives, where it applies; :class:`FastPlan` says where. It is decided once, when a run is built
(:meth:`FastPlan.decide`), from the scenario and from the capabilities its plug-ins *declare*
(never from their concrete classes), so a user's policy or rater that declares a capability
gets the kernel too:

========================  =====================================================================
capability                declared by
========================  =====================================================================
``scores_match_quality``  a policy whose score is the pair's match quality (DrawChance)
                          (:func:`lobbysim.policies.base.scores_match_quality`)
``exact_small_pools``     an assignment that decides small pools as the small-pass kernel does
                          (global matching) (:func:`lobbysim.policies.assignment.small_pool_limit`)
``float_beliefs``         a rater whose Gaussian beliefs read on floats, with TrueSkill's
                          quality (:class:`lobbysim.raters.base.FloatBeliefs`)
``float_means``           a rater whose means read on floats (the same protocol)
``outcome_only``          a rater that rates 1v1 games by outcomes alone, with ``rate_duel``
                          (:func:`lobbysim.raters.bayesian.rates_outcomes_only`)
========================  =====================================================================

``FastPlan.off()`` switches every kernel off: a run built with it takes the general paths
everywhere and gives the same records (tests/sim/test_fast_paths.py runs every bundled scenario
both ways). ``lobbysim validate -v`` prints the plan of a scenario, each kernel with why it does
or does not apply.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from lobbysim.policies.assignment import small_pool_limit
from lobbysim.raters.base import declares
from lobbysim.raters.bayesian import rates_outcomes_only

MAX_POOL = 1 << 30  # a small pool no assignment declares: "any" in an allowed plan

#: What each kernel does, for :meth:`FastPlan.describe` (in the order of the fields).
KERNELS = {
    "small_pool": "1v1 passes of a few players decided on floats (fast/small_pass.py)",
    "small_pool_status_quo": "the same under the status-quo policy, before the switch",
    "float_ties": "the tie-break uniforms drawn ahead in blocks (streams.Uniforms)",
    "float_means": "the driving rater's means on floats for back-fills and quits",
    "float_scoring": "one or two 1v1 games scored on floats (fast/duels.py), ffa truth on lists",
    "backfill_lists": "a back-fill pass seated on lists (fast/backfill.py)",
    "group_tickets": "a group pass's tickets formed once, not per data centre (fast/tickets.py)",
    "held_scores": "1v1 outcomes rated as games end, their scores drawn later in batches",
    "ring_hold": "a game's end answers the matchmaker's ring inline (fast/events.py)",
}


@dataclass(frozen=True)
class FastPlan:
    """Which kernels a run uses (see the module docstring); every field off is the general path.

    Attributes:
        small_pool: the largest 1v1 pool decided on floats under the scenario's policy (0:
            none; 2: only pools of two, where no policy's score is read).
        small_pool_status_quo: the same under the status-quo policy.
        float_ties: the tie-break stream's uniforms drawn ahead (every policy in force
            decides small pools on floats, so nearly every pass draws a few).
        float_means: the driving rater's means read on floats (``float_means``).
        float_scoring: batches of one or two finished 1v1 games scored on floats.
        backfill_lists: a back-fill pass seats players on lists rather than arrays.
        group_tickets: a group pass with parties forms its tickets once, not once per data
            centre.
        held_scores: 1v1 outcomes go to the driving rater as games end, scores drawn later.
        ring_hold: a 1v1 game's end holds the matchmaker's ring and answers it inline.
        reasons: why each kernel is on or off, by field name.
    """

    small_pool: int = 0
    small_pool_status_quo: int = 0
    float_ties: bool = False
    float_means: bool = False
    float_scoring: bool = False
    backfill_lists: bool = False
    group_tickets: bool = False
    held_scores: bool = False
    ring_hold: bool = False
    reasons: dict[str, str] = field(default_factory=dict, compare=False)
    #: False for :meth:`off`: :meth:`decide` then turns every kernel off.
    enabled: bool = True

    @classmethod
    def off(cls) -> FastPlan:
        """Return the plan that allows no kernel: a run built with it takes the general paths."""
        return cls(enabled=False, reasons={name: "off (FastPlan.off())" for name in KERNELS})

    @classmethod
    def without(cls, *names: str) -> FastPlan:
        """Return the plan that allows every kernel but ``names`` (to test one kernel alone).

        Raises:
            ValueError: a name is not a kernel's.
        """
        unknown = sorted(set(names) - set(KERNELS))
        if unknown:
            raise ValueError(f"not kernels: {unknown}; the kernels are {list(KERNELS)}")
        allowed: dict[str, Any] = {
            name: (0 if name in names else MAX_POOL)
            if name.startswith("small_pool")
            else name not in names
            for name in KERNELS
        }
        return cls(**allowed, reasons={name: "off (FastPlan.without)" for name in names})

    @classmethod
    def decide(
        cls,
        *,
        mode: str,
        wake_on_arrival: bool,
        policies: list[tuple[object, bool]],
        assignment: object,
        driver: object,
        rematch: bool,
        has_base: bool,
        drifts: bool,
        allowed: FastPlan | None = None,
        latency_limits: bool = False,
        rule_set: bool = False,
    ) -> FastPlan:
        """Return the plan of a run.

        Args:
            mode: the game's mode (``1v1``, ``team``, ``ffa``).
            wake_on_arrival: whether a pass runs on every arrival.
            policies: the policy then the status quo (if any), each with whether it scores
                (False for uniform or engagement pairing, or a policy that sees the truth).
            assignment: the 1v1 assignment.
            driver: the driving rater.
            rematch: whether a rematch rule bars pairs.
            has_base: whether the scenario has a player base.
            drifts: whether skills drift.
            latency_limits: whether latency limits constrain who may meet (a world's).
            rule_set: whether a rule set constrains who may meet (``matchmaker.rules``).
            allowed: a plan whose kernels are the only ones allowed (:meth:`off`: none).

        Raises:
            ValueError: a plug-in declares a capability with something other than True or
                False (the caller names the plug-in).
        """
        if allowed is not None and not allowed.enabled:
            return cls.off()
        why: dict[str, str] = {}
        one_v_one = mode == "1v1"
        limit = small_pool_limit(assignment) if one_v_one else 0
        beliefs = declares(driver, "float_beliefs")
        means = declares(driver, "float_means")
        small: list[int] = []
        for policy, scores in policies:
            barred = rematch or latency_limits or rule_set
            if not one_v_one or limit < 2 or barred or not beliefs or not scores:
                small.append(0)
            else:
                small.append(limit if declares(policy, "scores_match_quality") else 2)
        small_pool = small[0]
        small_sq = small[1] if len(small) > 1 else 0
        if not one_v_one:
            why["small_pool"] = f"off: {mode} games form groups"
        elif limit < 2:
            why["small_pool"] = "off: the assignment does not declare exact_small_pools"
        elif rematch:
            why["small_pool"] = "off: a rematch rule bars pairs"
        elif latency_limits:
            why["small_pool"] = "off: latency limits bar pairs"
        elif rule_set:
            why["small_pool"] = "off: a rule set bars pairs"
        elif not beliefs:
            why["small_pool"] = "off: the driving rater does not declare float_beliefs"
        elif small_pool == 0:
            why["small_pool"] = "off: the policy pairs without scores or sees the truth"
        elif small_pool == 2:
            why["small_pool"] = (
                "pools of two only (the policy does not declare scores_match_quality)"
            )
        else:
            why["small_pool"] = f"pools of 2 to {small_pool} (scores_match_quality)"
        if len(policies) < 2:
            why["small_pool_status_quo"] = "no status quo"
        elif small_sq:
            why["small_pool_status_quo"] = f"pools of 2 to {small_sq}"
        else:
            why["small_pool_status_quo"] = "off: as small_pool, for the status quo"
        # the uniforms are drawn ahead where every policy in force scores by match quality
        # (nearly every pass then draws a few); the stream is the same either way
        float_ties = (
            not rematch
            and not latency_limits
            and beliefs
            and all(declares(p, "scores_match_quality") for p, _ in policies)
        )
        why["float_ties"] = (
            "every policy in force declares scores_match_quality"
            if float_ties
            else "off: needs float_beliefs, scores_match_quality and no rematch rule"
        )
        why["float_means"] = (
            "the driver declares float_means" if means else "off: the driver does not declare it"
        )
        why["float_scoring"] = {
            "1v1": "one or two 1v1 games scored on floats",
            "ffa": "a free-for-all game's truth on lists",
        }.get(mode, "off: team games are scored on arrays")
        lists = not one_v_one
        why["backfill_lists"] = "back-fill passes" if lists else "off: 1v1 (no seats)"
        why["group_tickets"] = "group passes (with parties)" if lists else "off: 1v1 (no groups)"
        outcome = rates_outcomes_only(driver)
        held = one_v_one and wake_on_arrival and not has_base and outcome and not drifts
        why["held_scores"] = (
            "outcome_only driver, 1v1 on every arrival"
            if held
            else "off: needs 1v1 on every arrival, an outcome_only driver, no base or drift"
        )
        hold = one_v_one and wake_on_arrival and not rematch
        why["ring_hold"] = (
            "1v1 on every arrival"
            if hold
            else "off: needs 1v1 on every arrival and no rematch rule"
        )
        plan = cls(
            small_pool=small_pool,
            small_pool_status_quo=small_sq,
            float_ties=float_ties,
            float_means=means,
            float_scoring=mode in ("1v1", "ffa"),
            backfill_lists=lists,
            group_tickets=lists,
            held_scores=held,
            ring_hold=hold,
            reasons=why,
        )
        if allowed is not None:  # only what both allow
            plan = cls(
                **{
                    f.name: min(getattr(plan, f.name), getattr(allowed, f.name))
                    for f in fields(cls)
                    if f.name in KERNELS
                },
                reasons=why,
            )
        return plan

    def describe(self) -> list[str]:
        """Return one line per kernel: on or off, and why (what each does: :data:`KERNELS`)."""
        lines = []
        for name in KERNELS:
            state = "on " if getattr(self, name) else "off"
            reason = self.reasons.get(name, "")
            lines.append(f"{state} {name + ':':<22} {reason.removeprefix('off: ')}")
        return lines
