"""A cost model of Vanilla and Hybrid training: env steps per iteration and the saving.

Pure arithmetic on measured quantities, no I/O. Notation (all per phase):

* ``B`` tasks per iteration, ``G`` rollouts per group, ``R`` routing probes (root rollouts
  that estimate ``p(x)``), ``P`` root probes per visit of a Root task, ``K`` visits between two
  re-evaluations of a Local task, ``n`` train tasks, ``N`` iterations that update the policy.
* An episode's env cost is its length: ``E(p) = p * L_success + (1 - p) * L_failure`` for
  success rate ``p`` and mean lengths by outcome (failures usually run to the step limit).

Vanilla visits ``B`` tasks with ``G`` root rollouts each::

    C_V = B * G * E_root(p_V)

Hybrid, once every task is routed, visits a Local task with OneStep groups (no env step) and,
every ``K`` visits, ``R`` root probes; a Suffix task with ``G`` rollouts from its frontier; a
Root task with ``P`` probes. With ``q_L, q_S, q_R`` the shares of visits in each mode::

    C_H = B * (q_L * R * E_local / K + q_S * G * E_suffix + q_R * P * E_rootmode)

Before that, the routing pass spends ``n * R * E_root(p_0)`` on every task's first probes and
trains nothing (unless probes train). Over ``N`` updating iterations the fraction of Vanilla's
env steps that Hybrid saves is::

    S(N) = 1 - C_H / C_V - (routing_pass + extra) / (N * C_V)

where ``extra`` is any other fixed cost Hybrid carries and Vanilla does not (e.g. the train
demonstrations behind its checkpoints). With ``E_root(p_0) = E_root(p_V)`` and no extra this is
``1 - C_H / C_V - (n / B) (R / G) / N``: the routing pass is amortised only over many updates,
which is why the saving cannot show after ten.

The options of issue 40 enter as three terms (each at its paper value by default):

* routing from an estimate probes only the ``c`` calibration tasks: the routing pass is
  ``c * R * E_root(p_0)`` (:func:`routing_pass_cost` with ``n = c``), and the shares ``q`` are the
  estimate's routes;
* re-evaluation near tau_low re-probes only the Local tasks whose estimate is near it: the Local
  term is multiplied by that share ``r`` (``reeval_share``; an upper bound, as backoff and the
  early stop at a promoting success spend less);
* Root probe-then-expand grows a Root visit to ``G`` when its ``P`` probes differ, with chance
  ``e = 2 p (1 - p)`` at P = 2 (``expand_share``), adding ``q_R * e * (G - P) * E_rootmode``.

Updates sized by their decisions (``grpo.decision_quota``) and the Suffix threshold change no env
step of an iteration: the model, which assumes a Hybrid update teaches as much as a Vanilla one,
predicts them at the default's cost (what they change is how many updates a target needs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def episode_cost(success: float, length_success: float, length_failure: float) -> float:
    """Mean env steps of an episode that succeeds with probability ``success`` (scalars)."""
    if not 0.0 <= success <= 1.0:
        raise ValueError(f"a success rate lies in [0, 1], got {success}")
    if length_success < 0 or length_failure < 0:
        raise ValueError("episode lengths are non-negative")
    return success * length_success + (1.0 - success) * length_failure


@dataclass(frozen=True)
class VanillaInputs:
    tasks_per_iteration: int
    """B."""
    group_size: int
    """G."""
    root_episode: float
    """E_root at Vanilla's success: mean env steps of a root rollout."""


@dataclass(frozen=True)
class HybridInputs:
    tasks_per_iteration: int
    """B."""
    group_size: int
    """G (Suffix groups)."""
    routing_probes: int
    """R."""
    root_probes: int
    """P."""
    reeval_every: int
    """K: a Local task re-estimates p(x) every K visits."""
    share_local: float
    """q_L: share of (routed) visits that are Local."""
    share_suffix: float
    """q_S."""
    share_root: float
    """q_R."""
    local_probe_episode: float
    """E_local: mean env steps of a Local task's re-evaluation probe (a root rollout)."""
    suffix_episode: float
    """E_suffix: mean env steps of a rollout from the Suffix frontier to the end."""
    root_episode: float
    """E_rootmode: mean env steps of a Root task's probe."""
    reeval_share: float = 1.0
    """r: the share of Local visits whose re-evaluation is paid (1: the paper's periodic one)."""
    expand_share: float = 0.0
    """e: the share of Root visits that grow to G rollouts (0: the paper's two probes)."""

    def __post_init__(self) -> None:
        shares = (self.share_local, self.share_suffix, self.share_root)
        if any(q < 0 for q in shares) or not math.isclose(sum(shares), 1.0, abs_tol=1e-6):
            raise ValueError(f"mode shares must be non-negative and sum to 1, got {shares}")
        if self.reeval_every < 1:
            raise ValueError(f"reeval_every must be >= 1, got {self.reeval_every}")
        for name in ("reeval_share", "expand_share"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} lies in [0, 1], got {getattr(self, name)}")


def vanilla_cost(x: VanillaInputs) -> float:
    """C_V: env steps of one Vanilla iteration."""
    return x.tasks_per_iteration * x.group_size * x.root_episode


def hybrid_cost(x: HybridInputs) -> float:
    """C_H: env steps of one Hybrid iteration after the routing pass."""
    grown = max(0, x.group_size - x.root_probes) * x.expand_share
    per_visit = (
        x.share_local * x.reeval_share * x.routing_probes * x.local_probe_episode / x.reeval_every
        + x.share_suffix * x.group_size * x.suffix_episode
        + x.share_root * (x.root_probes + grown) * x.root_episode
    )
    return x.tasks_per_iteration * per_visit


def differ_chance(p: float, probes: int = 2) -> float:
    """The chance that ``probes`` rollouts of success rate ``p`` do not all agree."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"a success rate lies in [0, 1], got {p}")
    return 1.0 - p**probes - (1.0 - p) ** probes


def routing_pass_cost(n_tasks: int, routing_probes: int, root_episode: float) -> float:
    """Env steps of the first visit of every task: ``n * R * E_root(p_0)``."""
    return n_tasks * routing_probes * root_episode


def saving(c_vanilla: float, c_hybrid: float, updates: float, fixed_hybrid: float = 0.0) -> float:
    """S(N): the fraction of Vanilla's env steps over ``updates`` iterations that Hybrid saves
    when it needs as many updates, paying ``fixed_hybrid`` (routing pass, extra demonstrations)
    once. Negative when Hybrid costs more."""
    if c_vanilla <= 0:
        raise ValueError(f"Vanilla's cost per iteration must be positive, got {c_vanilla}")
    if updates <= 0:
        raise ValueError(f"the number of updates must be positive, got {updates}")
    return 1.0 - c_hybrid / c_vanilla - fixed_hybrid / (updates * c_vanilla)


def break_even_updates(c_vanilla: float, c_hybrid: float, fixed_hybrid: float) -> float:
    """The N at which S(N) = 0 (``inf`` when Hybrid's iterations cost Vanilla's or more)."""
    if c_hybrid >= c_vanilla:
        return math.inf
    return fixed_hybrid / (c_vanilla - c_hybrid)
