"""The variants of the paper's experiments: each a name for a set of config overrides.

A variant is named once, here, and its run directory is shared by every experiment that trains
it (``<root>/<profile>/runs/<variant>/seed<k>``): Table 3, Figure 4, Figure 5 and the default rows
of the sensitivity and option ablations are the same runs, trained once.
"""

from __future__ import annotations

from dataclasses import dataclass

_SWEEP_MARKS = (
    "rl.eval.every_env_steps=3000",
    "rl.eval.every_policy_samples=3000",
    "rl.budget={env_steps: 15000, policy_samples: 15000}",
)
"""The recipe sweep reads Val at the budget and at the last marks only (fewer evaluations), at the
budget it was run at (15,000 env steps, the default before the recipe raised it)."""


@dataclass(frozen=True)
class Variant:
    label: str
    overrides: tuple[str, ...] = ()
    stage1_scale: float = 1.0
    """Stage I runs this many times its profile's iterations (rounded): a budget relative to
    the profile's, so the ratio holds on every profile and in ``--quick`` runs alike."""


LEARNING_ESTIMATE, LEARNING_CALIBRATION = "likelihood", 8
"""The routing estimate of the option variants and the tasks probed to calibrate it, chosen from
the routing pilot on the train split before any run of them (docs/RESULTS.md, "Issue 40:
predictions before the runs")."""
_LEARNING = {
    "learn-estimate": Variant(
        f"routing from the {LEARNING_ESTIMATE} estimate ({LEARNING_CALIBRATION} tasks calibrate)",
        (
            f"rl.scheduler.routing_estimate={LEARNING_ESTIMATE}",
            f"rl.scheduler.routing_calibration={LEARNING_CALIBRATION}",
        ),
    ),
    "learn-reeval": Variant("re-evaluation only near tau_low", ("rl.scheduler.reeval=near",)),
    # 256 decisions per step: a Vanilla batch of the horizon buckets carries >= 512 per pass in
    # most iterations (h12 ~750, h40 ~2,700 with equal-reward groups skipped), so Vanilla's
    # recipe keeps its 2 x 2 steps; a Hybrid pass of ~240 (h40) makes one step instead of two
    "learn-quota": Variant(
        "updates sized by decisions (256 per step)", ("rl.grpo.decision_quota=256",)
    ),
    "learn-expand": Variant("Root probe-then-expand", ("rl.scheduler.root_expand=true",)),
}
"""The options of issue 40 one at a time (``learn`` combines them); each trains Base->Hybrid."""
LEARNING_VARIANTS = (*_LEARNING, "learn")

VARIANTS: dict[str, Variant] = {
    "default": Variant("paper defaults"),
    # pivot signals for one-step RL (Table 2)
    "pivots-reward_variance": Variant("reward variance", ("stage1.pivots.scorer=reward_variance",)),
    "pivots-entropy": Variant("entropy", ("stage1.pivots.scorer=entropy",)),
    "pivots-all": Variant("all checkpoints", ("stage1.pivots.scorer=all",)),
    "pivots-random": Variant("random", ("stage1.pivots.scorer=random",)),
    # PivotRL's own rule (a state with any reward variance), which the paper's Reward Variance
    # row follows: 0/1 rewards give a variance of at most 0.25, so under tau_dis = 0.45 every
    # task fell back to its two highest-variance checkpoints, zero-variance ones included
    "pivots-reward_variance-any": Variant(
        "reward variance > 0 (PivotRL's rule)",
        (
            "stage1.pivots.scorer=reward_variance",
            "stage1.pivots.tau_dis=0",
            "stage1.pivots.fallback_top_k=0",
        ),
    ),
    # the paper's All Pivots row runs at its own budget (38.4K samples against disagreement's
    # 8.2K, Table 2): the same scorer for 4.7 times Stage I's iterations (56 of the phone's 12)
    "pivots-all-long": Variant(
        "all checkpoints, 4.7x the budget", ("stage1.pivots.scorer=all",), stage1_scale=56 / 12
    ),
    # sensitivity of the four thresholds
    "tau_suffix-0.5": Variant("tau_suffix = 0.5", ("rl.scheduler.tau_suffix=0.5",)),
    "tau_dis-0.3": Variant("tau_dis = 0.3", ("rl.pivots.tau_dis=0.3",)),
    "tau_dis-0.6": Variant("tau_dis = 0.6", ("rl.pivots.tau_dis=0.6",)),
    "tau-0.35-0.65": Variant(
        "tau_low/high = 0.35/0.65", ("rl.scheduler.tau_low=0.35", "rl.scheduler.tau_high=0.65")
    ),
    # beyond the paper (issue 9), one option at a time
    "match-soft": Variant(
        "soft text matching + partial credit",
        (
            "stage1.match.text=soft",
            "rl.match.text=soft",
            "stage1.match.reward=partial",
            "rl.match.reward=partial",
        ),
    ),
    # one-step rewards that see text (issue 29): a type sample earns the reward only when its
    # text matches the expert's, so the wrong field's text (login-user's password typed into the
    # username) is not rewarded; binary reward, unlike match-soft's partial credit
    "match-text-soft": Variant(
        "soft text matching (one-step reward)", ("stage1.match.text=soft", "rl.match.text=soft")
    ),
    "match-text-exact": Variant(
        "exact text matching (one-step reward)", ("stage1.match.text=exact", "rl.match.text=exact")
    ),
    "pivot-temperature": Variant(
        "continuous pivot weights (T = 0.05)",
        ("stage1.pivots.temperature=0.05", "rl.pivots.temperature=0.05"),
    ),
    "pivot-task-quantile": Variant(
        "per-task pivot threshold",
        ("stage1.pivots.threshold=task_quantile", "rl.pivots.threshold=task_quantile"),
    ),
    "demotion": Variant(
        "forgetting monitor + demotion + replay",
        ("rl.scheduler.demotion=true", "rl.scheduler.replay_share=0.125"),
    ),
    "lp-frontier": Variant("learning-progress frontier", ("rl.scheduler.frontier=progress",)),
    "bandit": Variant("bandit routing (sample = 1 env step)", ("rl.scheduler.routing=bandit",)),
    "bandit-sample-0.1": Variant(
        "bandit routing (sample = 0.1 env step)",
        ("rl.scheduler.routing=bandit", "rl.scheduler.bandit_sample_cost=0.1"),
    ),
    "bandit-sample-10": Variant(
        "bandit routing (sample = 10 env steps)",
        ("rl.scheduler.routing=bandit", "rl.scheduler.bandit_sample_cost=10"),
    ),
    "clean-demos": Variant("demonstrations from the clean device", ("expert.device=clean",)),
    "coverage-0.7": Variant("experts on 70% of tasks", ("expert.train_coverage=0.7",)),
    "coverage-0.7-self-pool": Variant(
        "experts on 70% + self-generated pivots",
        ("expert.train_coverage=0.7", "rl.pivots.self_pool=true"),
    ),
    # the RL recipe (issue 27): the update size per batch, swept on Base->Vanilla only, on val.
    # Each variant sets every recipe field, so a variant means the same whatever the default is.
    **{
        f"recipe-{name}": Variant(
            f"lr {lr}, {e} epoch(s) x {m} mini-batch(es), {b} tasks per iteration",
            (
                f"rl.grpo.lr={lr}",
                f"rl.grpo.ppo_epochs={e}",
                f"rl.grpo.mini_batches={m}",
                f"rl.scheduler.tasks_per_iteration={b}",
                *_SWEEP_MARKS,
            ),
        )
        for name, lr, e, m, b in (
            ("e1m1", "3e-4", 1, 1, 8),
            ("e1m1-lr1e-3", "1e-3", 1, 1, 8),
            ("e2m2", "3e-4", 2, 2, 8),
            ("e2m2-lr1e-3", "1e-3", 2, 2, 8),
            ("e4m2", "3e-4", 4, 2, 8),
            ("b2-lr1e-3", "1e-3", 1, 1, 2),
        )
    },
    "train-probes": Variant("routing probes train", ("rl.scheduler.train_probes=true",)),
    # a Hybrid that spends its budget learning (issue 40): each option alone, then all of them
    **_LEARNING,
    "learn": Variant("all four options", tuple(o for v in _LEARNING.values() for o in v.overrides)),
    # the paper's defaults, in runs of their own that copy the seed's Base: the horizon sweep
    # trains Base->Hybrid and SFT->Vanilla beside, not after, the default run's Base->Vanilla
    "own-run": Variant("paper defaults, a run of its own"),
    "own-run-sft": Variant("paper defaults, a run of its own (imitation first)"),
}
RECIPE_VARIANTS = tuple(v for v in VARIANTS if v.startswith("recipe-"))
