"""The paper's experiments as data: which variants (:mod:`.variants`) each one trains, which
configurations of each variant it needs, and on which environment profiles (:mod:`.profiles`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import get_args

from adaroll.config import ConfigurationName
from adaroll.experiments.profiles import HORIZON_BUCKETS, Profile
from adaroll.experiments.variants import LEARNING_VARIANTS, RECIPE_VARIANTS
from adaroll.registry import Registry


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    variants: tuple[str, ...]
    configurations: tuple[str, ...]
    default_extra: tuple[str, ...] = field(default=())
    """Configurations the ``default`` variant also trains (e.g. the Vanilla reference that
    defines the target of an ablation)."""
    note: str = ""
    """How to read the table (printed under it)."""
    profiles: tuple[str, ...] = ()
    """The environment profiles it runs on (every one when empty)."""
    own_configurations: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(variant, configurations) pairs: variants that train these instead of ``configurations``,
    e.g. one configuration per run, so that the phases of a seed train in parallel."""
    optional: tuple[str, ...] = ()
    """Variants the analysis reports when their runs are there and skips otherwise, so that
    ``--variants`` can leave them out (compute is short: run the combined option first)."""

    def narrowed(self, chosen: tuple[str, ...] | None) -> Experiment:
        """The experiment with only the ``chosen`` optional variants (every one when None);
        ``chosen`` may name variants of other experiments (one filter for several)."""
        if chosen is None:
            return self
        dropped = set(self.optional) - set(chosen)
        return replace(self, variants=tuple(v for v in self.variants if v not in dropped))

    def runs_on(self, profile: str) -> bool:
        return not self.profiles or profile in self.profiles

    def variants_for(self, profile: Profile) -> tuple[str, ...]:
        return tuple(v for v in self.variants if v not in profile.skip)

    def configurations_of(self, variant: str, profile: Profile) -> tuple[str, ...]:
        extra = self.default_extra if variant == "default" else ()
        own = dict(self.own_configurations).get(variant, self.configurations)
        return tuple(
            c for c in dict.fromkeys(("base", *own, *extra)) if c not in profile.skip_configurations
        )


EXPERIMENTS: Registry[Experiment] = Registry("experiment")
_SENSITIVITY = ("default", "tau_suffix-0.5", "tau_dis-0.3", "tau_dis-0.6", "tau-0.35-0.65")
for _exp in (
    Experiment(
        "full",
        "Full method (Table 3 analogue)",
        ("default",),
        get_args(ConfigurationName)[1:],  # every configuration beside Base
    ),
    Experiment(
        "efficiency",
        "Training efficiency (Figure 4 analogue)",
        ("default",),
        ("base_vanilla", "base_hybrid"),
    ),
    Experiment(
        "routing",
        "Routing dynamics (Figure 5 analogue)",
        ("default",),
        ("base_hybrid", "action_hybrid"),
    ),
    Experiment(
        "pivots",
        "Pivot-signal ablation (Table 2 analogue)",
        (
            "default",
            "pivots-reward_variance",
            "pivots-entropy",
            "pivots-all",
            "pivots-random",
            "pivots-all-long",
            "pivots-reward_variance-any",
        ),
        ("action",),
    ),
    Experiment(
        "sensitivity",
        "Threshold sensitivity",
        _SENSITIVITY,
        ("base_hybrid",),
        default_extra=("base_vanilla",),
        note="p(x) is measured with `routing_probes` = 4 root rollouts, so it only takes the "
        "values 0, 0.25, 0.5, 0.75 and 1: thresholds matter only where they cross those "
        "points. (0.35, 0.65) moves p = 0.25 to Local and p = 0.75 to Root; the other grid "
        "corner (0.15, 0.85) routes every value like the defaults (0.25, 0.75) and is "
        "therefore the same run.",
    ),
    Experiment(
        "options",
        "Beyond the paper: each option against the paper's default",
        (
            "default",
            "match-soft",
            "pivot-temperature",
            "pivot-task-quantile",
            "demotion",
            "lp-frontier",
            "bandit",
            "bandit-sample-0.1",
            "bandit-sample-10",
            "coverage-0.7",
            "coverage-0.7-self-pool",
        ),
        ("base_hybrid",),
        default_extra=("base_vanilla",),
        note="The self-generated pivot pool only acts on tasks without expert pivots: read "
        "its row against `experts on 70% of tasks`, not against the paper defaults. The three "
        "bandit rows price a policy sample at 0.1, 1 and 10 env steps (its cost model).",
    ),
    Experiment(
        "bandit-action",
        "Beyond the paper: bandit routing from Action",
        ("default", "bandit"),
        ("action_hybrid",),
        default_extra=("base_vanilla",),
        note="The options table trains Base->Hybrid only; this checks the bandit option "
        "on the other Hybrid configuration. Both rows start from the "
        "same Action policy (routing acts in Stage II only).",
    ),
    Experiment(
        "text-match",
        "One-step rewards that see text (the web: which field gets which text)",
        ("default", "match-text-soft", "match-text-exact"),
        ("action_hybrid",),
        default_extra=("base_vanilla",),
        note="Action->Hybrid uses the one-step reward twice: in Stage I and in Local. It "
        "rewards a type sample by its text: any text (paper), within normalised edit "
        "distance 0.2 (soft) or equal (exact). Only the web profiles run the two options; "
        "the protocol (val, seeds) decides which becomes the web default.",
    ),
    Experiment(
        "bandit-routing",
        "Beyond the paper: the bandit router against the thresholds (promotion rule; Figure 5 view)",
        ("default", "bandit"),
        ("base_hybrid",),
    ),
    Experiment(
        "device",
        "The device: perturbations, and demonstrations from before they began",
        ("default", "clean-demos"),
        ("sft", "base_vanilla", "base_hybrid", "action_vanilla", "action_hybrid", "sft_vanilla"),
        note="On `mobile` the training device is noisy; `clean-demos` records the experts on "
        "the clean device (SFT imitates those recordings; the checkpoints are their action "
        "prefixes replayed on the noisy device, billed as demo env steps). On `mobile-clean` "
        "both are the clean device, so that variant is the default and is not run.",
    ),
    Experiment(
        "recipe",
        "The RL recipe, tuned on Base->Vanilla alone (val)",
        RECIPE_VARIANTS,
        ("base_vanilla",),
        note="Chosen by Base->Vanilla's Val Avg@4 at the profile's budget (mean over seeds), "
        "among the recipes that make at least 50 optimizer steps, before any other "
        "configuration runs it; the choice then applies to every RL configuration.",
    ),
    Experiment(
        "train-probes",
        "Beyond the paper: routing probes that train",
        ("default", "train-probes"),
        ("base_hybrid",),
        default_extra=("base_vanilla",),
    ),
    Experiment(
        "horizon",
        "Where routing pays: the saving by budget on one horizon bucket",
        ("default", "own-run", "own-run-sft", "tau_suffix-0.5", *LEARNING_VARIANTS),
        ("base_vanilla",),
        own_configurations=(
            ("own-run", ("base_hybrid",)),
            ("own-run-sft", ("sft", "sft_vanilla")),
            *((v, ("base_hybrid",)) for v in ("tau_suffix-0.5", *LEARNING_VARIANTS)),
        ),
        optional=("own-run-sft", "tau_suffix-0.5", *LEARNING_VARIANTS),
        profiles=tuple(f"mobile-{bucket}" for bucket in HORIZON_BUCKETS),
        note="Each budget is read from the same runs, cut where a run with that budget would "
        "have stopped (a phase's first b env steps and its marks do not depend on its budget). "
        "Target per seed and budget: the mean of Base->Vanilla's last three Val Avg@4 within "
        "it. Saving: Vanilla minus Hybrid total env steps to the target, paired by seed (a run "
        "that never reached it counted at the larger bill of its pair); predicted: the train "
        "pilot's S(N), committed before the runs. The Train target (the paper's yardstick) is "
        "built the same way from Base->Vanilla's Train Avg@4, evaluated at the same marks. The "
        "option rows (tau_suffix 0.5 and issue 40's options, each training Base->Hybrid) are "
        "paired with the same seeds' Base->Vanilla and default Base->Hybrid.",
    ),
    Experiment("restore-cost", "Restore cost (Table 1 analogue)", (), ()),
):
    EXPERIMENTS.register(_exp.name)(_exp)
