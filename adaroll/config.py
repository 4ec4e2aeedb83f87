"""Typed, frozen run configuration, loaded from YAML and validated field by field.

Every field carries a docstring (pydantic reads attribute docstrings into the schema), so
``adaroll config show`` and the docs are generated from this file. A bad value fails at load
with the dotted field path and the offending value.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from adaroll.actions import ActionMatcher


class ConfigError(ValueError):
    """A configuration file or override is invalid; the message names field and value."""


class Frozen(BaseModel):
    # inf survives the YAML dump of a saved config (as .inf; pydantic's default writes null)
    model_config = ConfigDict(
        frozen=True, extra="forbid", use_attribute_docstrings=True, ser_json_inf_nan="constants"
    )


class EnvConfig(Frozen):
    name: str = "mobile"
    """Registered environment name (`adaroll envs list`)."""
    snapshot_backend: str = "memory"
    """Registered snapshot backend used for Suffix starts: memory, replay, forkserver or criu
    (docs/envs.md says which works for which env)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Keyword options passed to the environment factory. The mobile env's ``device`` defaults
    to ``noisy`` here (a phone that interrupts and drifts; ``clean`` is the stock phone)."""
    suite_options: dict[str, Any] = Field(default_factory=dict)
    """Keyword options passed to the task suite (split sizes, suite seed)."""

    @model_validator(mode="after")
    def _mobile_runs_on_the_noisy_device(self) -> EnvConfig:
        if self.name == "mobile" and "device" not in self.options:
            object.__setattr__(self, "options", {**self.options, "device": "noisy"})
        return self


class ExpertConfig(Frozen):
    kind: Literal["scripted", "remote"] = "scripted"
    """scripted: the env's own solvers; remote: a model behind an OpenAI-compatible endpoint."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Remote expert options (base_url, model, api_key_env, ...; see docs/llm.md)."""
    device: Literal["training", "clean"] = "training"
    """Where the demonstrations come from: the training device (default) or the clean one,
    i.e. recorded before the world changed. With ``clean`` on a noisy training device, the
    checkpoints are the demonstrations' action prefixes replayed there (billed as demo env
    steps), and SFT learns from the clean recordings."""
    train_coverage: float = Field(1.0, gt=0, le=1)
    """Share of train tasks whose verified demonstrations are kept (a random subset, fixed by
    the seed). Below 1 it plays the paper's situation where the expert fails on some tasks
    (45 of 256 on MobileGym): those tasks get no checkpoints, no pivots and go to Root."""


class PolicyConfig(Frozen):
    kind: str = "small"
    """Registered policy kind: small, hf or remote."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Keyword options of the policy's own config."""
    history: int = Field(4, ge=0)
    """Number of previous actions shown to the policy."""


class ChecksConfig(Frozen):
    """What `adaroll run` checks before it trains (:mod:`adaroll.training.preflight`): a run whose
    experts never verify, whose pivot phases have no checkpoint, or whose task seeds all give one
    start state trains on nothing and says nothing, unless stopped here."""

    stop: bool = True
    """Stop before training when a check fails (the error says what to do); false (``adaroll
    run --go-on``) prints the findings as warnings and trains anyway."""
    min_verified_rate: float = Field(0.0, ge=0, le=1)
    """A split (pretrain, train) whose experts verify less than this share of its tasks fails;
    a split with tasks where no expert run verifies always fails."""
    start_states: bool = True
    """Check that task seeds change the start state: resets up to two train tasks of each
    template until two start states differ (the instruction and the element tree)."""


class SFTConfig(Frozen):
    epochs: int = Field(8, ge=1)
    """Passes over the expert steps."""
    batch_size: int = Field(64, ge=1)
    """Expert steps per gradient step."""
    lr: float = Field(3e-3, gt=0)
    """Adam learning rate."""


class GRPOConfig(Frozen):
    group_size: int = Field(8, ge=2)
    """Samples per GRPO group for OneStep, Suffix and vanilla Root groups."""
    lr: float = Field(1e-3, gt=0)
    """Adam learning rate of RL updates."""
    clip_eps: float = Field(0.2, gt=0)
    """PPO clip range of the probability ratio."""
    kl_coef: float = Field(0.0, ge=0)
    """Weight of the k3 KL penalty to the phase's starting policy, kept frozen as the reference
    (0 disables it and keeps no reference copy)."""
    normalize_std: bool = True
    """Divide group advantages by the group's standard deviation."""
    aggregation: Literal["token-mean", "sequence-mean"] = "token-mean"
    """How per-decision losses are averaged."""
    ppo_epochs: int = Field(1, ge=1)
    """Passes over each batch of groups; each pass makes ``mini_batches`` optimizer steps."""
    mini_batches: int = Field(1, ge=1)
    """Optimizer steps per pass: the batch's groups (whole groups, in plan order) are split into
    this many mini-batches. A batch makes ``ppo_epochs x mini_batches`` steps; from the second
    one on the PPO ratio leaves 1 and the clip acts. A batch with fewer usable groups than this
    makes one step per group."""
    max_grad_norm: float = Field(1.0, gt=0)
    """Gradient clipping norm."""
    micro_batch: int = Field(512, ge=1)
    """Decisions per forward/backward pass; gradients accumulate to the same update."""
    decision_quota: int | None = Field(None, ge=1)
    """Updates sized by the decisions they carry (an option, issue 40; None: off, the recipe's
    ``ppo_epochs x mini_batches`` steps whatever the batch holds). Set: each pass makes
    ``min(mini_batches, max(1, D // decision_quota))`` optimizer steps, D the batch's decisions
    with a gradient (those of its groups whose rewards differ), so that every step carries at
    least this many decisions where the batch has them: a small Hybrid batch (mostly one-step
    groups) is stepped on less often than a large Vanilla one, and a Vanilla batch of at least
    ``mini_batches x decision_quota`` decisions keeps its steps. A quota no batch of the phase
    can meet (more decisions than its largest batch could hold) is refused at load."""


class PivotConfig(Frozen):
    scorer: str = "disagreement"
    """Registered pivot scorer: disagreement, reward_variance, entropy, all, random (an
    unknown name is an error listing the registered ones)."""
    n_samples: int = Field(8, ge=2)
    """Policy samples per checkpoint used to score it (N)."""
    tau_dis: float = Field(0.45, ge=0, le=1)
    """Checkpoints scoring strictly above this are pivots."""
    fallback_top_k: int = Field(2, ge=0)
    """A task with no checkpoint above tau_dis uses its k highest-scoring checkpoints."""
    budget_top_k: int | None = Field(None, ge=1)
    """If set, keep exactly the k highest-scoring checkpoints overall (budget-matched ablations)."""
    threshold: Literal["fixed", "task_quantile"] = "fixed"
    """fixed: every task's gate is tau_dis (paper). task_quantile: each task's gate is the
    `task_quantile` quantile of its own checkpoints' scores, so a task the policy finds uniformly
    easy or hard still gets its relatively most uncertain states (the gate stays strict)."""
    task_quantile: float = Field(0.75, ge=0, le=1)
    """Quantile of a task's scores used as its gate when threshold=task_quantile."""
    temperature: float = Field(0.0, ge=0)
    """0: hard gate (paper). Above 0: OneStep starts (Stage I, Local) are redrawn at every
    visit from all checkpoints, each with probability sigmoid((score - gate) / temperature),
    so a 6-2 split (D=0.43) is still trained sometimes; tends to the hard gate as it tends to 0.
    Suffix frontiers keep using the hard pivot set."""
    self_pool: bool = False
    """Hybrid only: a task without pivots (e.g. its expert failed) gets checkpoints from the
    policy's own successful Root/Suffix rollouts, deduplicated by state (UI tree hash), scored
    with N samples like expert ones (ledgered as onestep/routing policy samples); the task is then
    routed by its p(x). Needs the local rollout backend."""

    @field_validator("scorer")
    @classmethod
    def _registered_scorer(cls, name: str) -> str:
        from adaroll.algos.pivots import PIVOT_SCORERS

        if name not in PIVOT_SCORERS.names():
            raise ValueError(
                f"unknown pivot scorer {name!r}; valid: {', '.join(PIVOT_SCORERS.names())}"
            )
        return name


class MatchConfig(Frozen):
    """The action equivalence M(a, b) of a phase: pivot clustering (D) and the OneStep reward."""

    tol_x: float = Field(0.05, ge=0, le=1)
    """Point actions match within this normalised horizontal distance (inclusive)."""
    tol_y: float = Field(0.05, ge=0, le=1)
    """Point actions match within this normalised vertical distance (inclusive)."""
    text: Literal["any", "soft", "exact"] = "any"
    """Text inputs: any (paper: every two type actions match), soft (normalised edit distance
    after case folding and whitespace collapsing <= text_max_distance) or exact."""
    text_max_distance: float = Field(0.2, ge=0, le=1)
    """Largest normalised edit distance at which soft text matching still matches."""
    reward: Literal["binary", "partial"] = "binary"
    """OneStep reward: binary 1[M(a, a^E)] (paper); partial: a type action against an expert
    type action earns its text similarity (1 - normalised edit distance), other kinds 0/1."""

    def build(self) -> ActionMatcher:
        """The :class:`~adaroll.actions.ActionMatcher` these settings describe."""
        return ActionMatcher(
            tol_x=self.tol_x,
            tol_y=self.tol_y,
            text_mode=self.text,
            text_max_distance=self.text_max_distance,
            partial_text_credit=self.reward == "partial",
        )


_THRESHOLD_ROUTING_ONLY = (
    "tau_low",
    "tau_high",
    "tau_suffix",
    "local_reeval_every",
    "demotion",
    "replay_share",
    "frontier",
    "routing_estimate",
    "routing_calibration",
    "reeval",
    "reeval_margin",
    "root_expand",
    "root_expand_below",
)
"""SchedulerConfig fields that only the paper's threshold router reads."""


class SchedulerConfig(Frozen):
    tau_low: float = Field(0.25, ge=0, le=1)
    """Tasks with p(x) below this are trained Local (OneStep on pivots)."""
    tau_high: float = Field(0.75, ge=0, le=1)
    """Tasks with p(x) above this are trained Root; in between, Suffix."""
    tau_suffix: float = Field(0.75, gt=0, le=1)
    """Suffix success rate above which the frontier moves to the previous pivot (paper: 0.75 main
    text, 0.5 appendix); in (0, 1]: at 0 a single success would move it."""
    routing_probes: int = Field(4, ge=1)
    """Root rollouts that estimate p(x) for routing (both routers; ledgered as routing)."""
    root_probes: int = Field(2, ge=2)
    """Root rollouts per visit of a Root task; updated only when their outcomes differ."""
    local_reeval_every: int = Field(3, ge=1)
    """Local tasks re-estimate p(x) every this many visits."""
    train_probes: bool = False
    """Routing probes also train: a task's routing probes (its first visit's, Local
    re-evaluations', the demotion monitor's and the bandit's) form a GRPO group that enters the
    update when their outcomes differ, as Root probes always do. False (the paper's reading):
    probes only measure p(x). Either way they are billed as routing."""
    tasks_per_iteration: int = Field(8, ge=1)
    """Tasks visited per iteration (round robin over the train split)."""
    pivots_per_iteration: int = Field(64, ge=1)
    """Stage I: OneStep groups per update (round robin over all pivots)."""
    # Beyond the paper (issue 9): forgetting monitor and demotion, replay of mastered tasks,
    # learning-progress frontier and bandit routing, each off by default. The paper's threshold
    # router is the default until an option beats it under the protocol of docs/RESULTS.md
    # (total env steps to the target with a CI excluding zero, no worse on `val`).
    demotion: bool = False
    """Forgetting monitor: keep the last `monitor_window` root outcomes of every Suffix and Root
    task (Root tasks' own probes, plus `routing_probes` root probes of Suffix tasks every
    `monitor_every` visits, ledgered as routing) and demote Root -> Suffix (deepest pivot) when
    their one-sided Wilson upper bound falls below `demote_root_below`, Suffix -> Local below
    `demote_suffix_below`. False: the paper's monotone promotion."""
    monitor_every: int = Field(3, ge=1)
    """With demotion: Suffix tasks get root probes (purpose routing) every this many visits."""
    monitor_window: int = Field(12, ge=1)
    """With demotion: most recent root outcomes per task kept for the test (cleared when its mode
    changes, so each decision rests on outcomes of the current mode only)."""
    demotion_confidence: float = Field(0.95, gt=0.5, lt=1)
    """With demotion: one-sided confidence of the Wilson upper bound."""
    demote_root_below: float = Field(0.5, ge=0, le=1)
    """With demotion: a Root task whose success is confidently below this drops to Suffix."""
    demote_suffix_below: float = Field(0.25, ge=0, le=1)
    """With demotion: a Suffix task whose root success is confidently below this drops to Local."""
    replay_share: float = Field(0.0, ge=0, le=1)
    """Replay of mastered tasks: besides the round robin, each iteration trains OneStep groups
    (no env steps) on the pivots of max(1, round(replay_share * tasks_per_iteration)) Root tasks,
    round robin over them, so mastered decisions keep a gradient against drift. 0: off."""
    frontier: Literal["threshold", "progress"] = "threshold"
    """How the Suffix frontier moves. threshold (paper): to the previous pivot when a group's
    success exceeds tau_suffix. progress: by learning progress - a group with no reward variance
    moves it at once (all successes: shallower, all failures: deeper); otherwise, once
    `lp_window` groups at the frontier show a success-rate slope within +-`lp_min_slope`, it
    moves towards success 0.5 (shallower if their mean is >= 0.5, else deeper); past the first
    pivot the task is promoted to Root."""
    lp_window: int = Field(4, ge=2)
    """frontier=progress: groups at one frontier whose success-rate slope is tested."""
    lp_min_slope: float = Field(0.05, ge=0)
    """frontier=progress: a slope (success per group) this small or smaller is a plateau."""
    # A Hybrid that spends its budget learning (issue 40), each off by default: routing from a
    # zero-env-cost estimate, re-evaluation only near a route's threshold, Root visits that grow
    # to a whole group when they can train.
    routing_estimate: Literal["probes", "match", "likelihood"] = "probes"
    """How a task's first visit routes it. probes (the paper): `routing_probes` root rollouts
    measure p(x). match: the estimate prod_t f_t over the task's expert checkpoints, f_t the
    (smoothed) share of pivot scoring's N samples at c_t that match the expert's action - no env
    step; likelihood: the same with f_t = pi(a^E_t | c_t), one forward pass per checkpoint.
    Either is calibrated (p = estimate^gamma, gamma fitted on the probes of the first
    `routing_calibration` tasks, which are probed as the paper does, and on every later probe)
    and kept current by the task's one-step groups (a group at c_t replaces f_t by its match
    share). Every probe that runs is billed as routing/reeval. A task without expert checkpoints
    has nothing to estimate from: asking for an estimate on such a split is a config error."""
    routing_calibration: int = Field(0, ge=0)
    """routing_estimate=match|likelihood: how many tasks (the first of the round robin, so
    spread over the templates) are probed with `routing_probes` root rollouts at their first
    visit to calibrate the estimate; tasks visited before those probes are back are probed too.
    0: the raw estimate routes from the start. More than the train split is a config error."""
    reeval: Literal["periodic", "near"] = "periodic"
    """When a Local task is re-probed. periodic (the paper): `routing_probes` root rollouts every
    `local_reeval_every` visits. near: only when its running estimate (see routing_estimate:
    its pivots' match rates as its one-step groups update them, calibrated on the probes)
    reaches tau_low - `reeval_margin`, at most every `local_reeval_every` visits, the wait
    doubling after each re-evaluation that did not promote it (backoff); the probes then run one
    per visit and stop at the first success that already promotes it (at least
    ceil(tau_low x routing_probes) successes of routing_probes) or once that is out of reach."""
    reeval_margin: float = Field(0.1, ge=0, le=1)
    """reeval=near: how far below tau_low a Local task's estimate may be and still be re-probed."""
    root_expand: bool = False
    """Root probe-then-expand: when a Root task's `root_probes` probes differ, or its estimate
    lies below `root_expand_below`, the visit's group grows to `grpo.group_size` rollouts (the
    extra ones billed as Root training) so that the update has a whole group. False: the paper's
    two probes, an update only when they differ. Acts in AdaRoll's trainer loop (the TRL and
    verl adapters collect each planned group once)."""
    root_expand_below: float | None = Field(None, ge=0, le=1)
    """root_expand: also grow a Root visit whose task's estimate is below this, even when its
    probes agree (None: only when they differ)."""
    routing: Literal["thresholds", "bandit"] = "thresholds"
    """How Stage II chooses start and horizon per task. thresholds (paper, the default): routing
    by p(x) with tau_low/tau_high and the Suffix frontier; the four thresholds and `demotion`,
    `replay_share` and `frontier` act under it. bandit (an option): per task a discounted UCB
    over the arms Local (OneStep on all pivots), Suffix from each pivot and Root
    (`root_probes` rollouts); no thresholds (see `adaroll config schema` for its settings)."""
    bandit_exploration: float = Field(0.05, ge=0)
    """routing=bandit: UCB exploration weight c on the progress (bonus c sqrt(ln(1 + N) / n));
    progress is in units of root success rate, so c is of the size of a gain worth finding."""
    bandit_discount: float = Field(0.9, gt=0, le=1)
    """routing=bandit: a task's arm statistics are multiplied by this at each of its pulls, so
    old outcomes fade as the policy changes (1: stationary UCB)."""
    bandit_sample_cost: float = Field(1.0, ge=0)
    """routing=bandit: the price of one policy sample in env-step units (pull cost = env steps +
    this x policy samples, floored at 1). 1 prices them alike; on a real phone an env step costs
    seconds and a sample of a small model milliseconds (set it low), on an API-served model the
    other way round. The experiments report x0.1, x1 and x10."""
    bandit_probe_every: int = Field(2, ge=1)
    """routing=bandit: a task gets `routing_probes` root probes at its first visit and every this
    many visits; the change of success between probes is the progress of the pulls in between."""

    @model_validator(mode="after")
    def _ordered(self) -> SchedulerConfig:
        if self.tau_low > self.tau_high:
            raise ValueError(f"tau_low ({self.tau_low}) must not exceed tau_high ({self.tau_high})")
        if self.routing_calibration and self.routing_estimate == "probes":
            raise ValueError(
                "routing_calibration calibrates an estimate: set routing_estimate to match or "
                "likelihood (probes route every task by its own probes)"
            )
        if self.root_expand_below is not None and not self.root_expand:
            raise ValueError("root_expand_below acts with root_expand=true only")
        if self.routing == "bandit":  # a setting the bandit never reads must not pass silently
            fields = type(self).model_fields
            moved = [k for k in _THRESHOLD_ROUTING_ONLY if getattr(self, k) != fields[k].default]
            if moved:
                raise ValueError(
                    f"routing=bandit never reads {', '.join(moved)}: "
                    "set routing=thresholds for the paper's router"
                )
        return self


class BudgetConfig(Frozen):
    """When a phase stops: the first limit spent ends it (``done.json`` says which).

    Units are the same for every configuration (docs/RESULTS.md, "How we measure"): an env
    step is one action executed in an environment, whatever it was for; a policy sample is one
    action drawn from the policy."""

    iterations: int | None = Field(None, ge=1)
    """Stop after this many iterations."""
    env_steps: int | None = Field(None, ge=1)
    """Stop once the phase spent this many env steps: training rollouts, routing probes,
    replays (snapshot rebuilds, restore fallbacks) and selection evaluations."""
    policy_samples: int | None = Field(None, ge=1)
    """Stop once the phase drew this many policy samples for training and routing (one-step
    groups spend samples but no env steps, so an env-step budget alone never ends them)."""
    min_optimizer_steps: int = Field(0, ge=0)
    """The env-step and policy-sample limits do not end the phase before it has made this many
    optimizer steps (``iterations`` still does, and must be set with it). 0 (the protocol's
    equal budgets): off. ``adaroll run --quick`` sets 1, so that a routing pass longer than its
    small budget (long episodes, e.g. a Gymnasium env) cannot leave a phase without an update."""

    @model_validator(mode="after")
    def _some_limit(self) -> BudgetConfig:
        if self.iterations is None and self.env_steps is None and self.policy_samples is None:
            raise ValueError("a budget needs at least one of iterations, env_steps, policy_samples")
        if self.min_optimizer_steps and self.iterations is None:
            raise ValueError("min_optimizer_steps needs iterations (a phase that never updates)")
        return self


REPORT_ONLY_SPLITS = ("heldout", "heldout-templates")
"""Splits evaluated only to report, after every decision: no selection may read them."""


class EvalConfig(Frozen):
    k: int = Field(4, ge=1)
    """Root attempts per task for Avg@k / Pass@k."""
    every: int | None = Field(5, ge=1)
    """Evaluate every this many iterations (None: only at the cost marks below)."""
    every_env_steps: int | None = Field(None, ge=1)
    """Also evaluate at the first iteration past every multiple of this many phase env steps
    (the budget's unit), so configurations are compared at the same cost marks."""
    every_policy_samples: int | None = Field(None, ge=1)
    """Also evaluate at the first iteration past every multiple of this many policy samples."""
    splits: tuple[str, ...] = ("val",)
    """Task splits evaluated periodically (iteration 0, the marks, the end: the learning curve)."""
    final_splits: tuple[str, ...] = ("train", "val", "heldout")
    """Task splits evaluated at the end of a phase."""
    select_on: str = "val"
    """Split whose Avg@k chooses Stage I's best policy; never a held-out split."""
    keep_policies: bool = False
    """Also save the policy of every evaluation under PHASE/marks/<iteration>, so that the
    crossing jitter (how far a first crossing of the target moves with the evaluation's own
    sampling, same policies) can be measured afterwards (`adaroll jitter`)."""

    @field_validator("select_on")
    @classmethod
    def _selection_is_not_held_out(cls, split: str) -> str:
        if split in REPORT_ONLY_SPLITS:
            raise ValueError(
                f"selection must read val (or train); "
                f"{' and '.join(REPORT_ONLY_SPLITS)} are evaluated only to report"
            )
        return split


class TrainConfig(Frozen):
    """One RL training phase (stage1, hybrid or vanilla)."""

    algorithm: Literal["stage1", "onestep", "hybrid", "vanilla"] = "hybrid"
    """Which scheduler drives the phase: stage1 (OneStep GRPO on pivots, keeps the best policy
    by `eval.select_on`), onestep (the same groups, keeps the last policy: the one-step-only
    baseline), hybrid (routing) or vanilla (Root groups for every task)."""
    budget: BudgetConfig = BudgetConfig(iterations=20)
    """When to stop."""
    grpo: GRPOConfig = GRPOConfig()
    """GRPO group and update settings."""
    pivots: PivotConfig = PivotConfig()
    """Pivot scoring and selection."""
    match: MatchConfig = MatchConfig()
    """Action equivalence for pivot clustering and the OneStep reward."""
    scheduler: SchedulerConfig = SchedulerConfig()
    """Routing thresholds and cadences."""
    eval: EvalConfig = EvalConfig()
    """Periodic evaluation."""
    keep: Literal["best", "last"] = "last"
    """Which policy the phase hands on: last (its final weights) or best (the one with the best
    Avg@k on `eval.select_on` so far; those evaluations then select, a cost of every
    configuration that starts from it). Stage I (algorithm stage1: one-step training) keeps
    best unless set; every other phase keeps last."""

    @model_validator(mode="before")
    @classmethod
    def _stage1_keeps_best(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("algorithm") == "stage1" and "keep" not in data:
            return {**data, "keep": "best"}
        return data

    @model_validator(mode="after")
    def _mini_batches_fit_the_batch(self) -> TrainConfig:
        groups = (
            self.scheduler.pivots_per_iteration
            if self.algorithm in ("stage1", "onestep")
            else self.scheduler.tasks_per_iteration
        )
        if self.grpo.mini_batches > groups:
            where = (
                "scheduler.pivots_per_iteration"
                if self.algorithm in ("stage1", "onestep")
                else "scheduler.tasks_per_iteration"
            )
            raise ValueError(
                f"grpo.mini_batches ({self.grpo.mini_batches}) is larger than the batch: "
                f"{where} plans {groups} groups per iteration, so a mini-batch would "
                "hold less than one group"
            )
        return self

    def most_decisions(self, step_limit: int | None = None) -> int | None:
        """The most decisions one iteration's batch of this phase can carry: one-step phases
        exactly ``pivots_per_iteration x group_size`` (one decision per sample); the others, with
        episodes of at most ``step_limit`` env steps (plus a last rejected sample), every
        visited task's groups - Root, Suffix, or one-step groups on at most ``step_limit``
        pivots, training probes and replayed pivots - at full length (None without the limit)."""
        sched, g = self.scheduler, self.grpo.group_size
        if self.algorithm in ("stage1", "onestep"):
            return sched.pivots_per_iteration * g
        if step_limit is None:
            return None
        probes = sched.routing_probes if sched.train_probes else 0
        replayed = max(1, round(sched.replay_share * sched.tasks_per_iteration))
        tasks = sched.tasks_per_iteration + (replayed if sched.replay_share > 0 else 0)
        return tasks * (g + probes) * (step_limit + 1)

    def check_decision_quota(self, step_limit: int | None = None) -> None:
        """Refuse a ``grpo.decision_quota`` that no batch of this phase can meet."""
        quota, most = self.grpo.decision_quota, self.most_decisions(step_limit)
        if quota is not None and most is not None and quota > most:
            raise ValueError(
                f"grpo.decision_quota ({quota}) is more decisions than any batch of this "
                f"{self.algorithm} phase can carry (at most {most:,}"
                + (f" with episodes of at most {step_limit} steps" if step_limit else "")
                + "): every optimizer step would fall short of it"
            )

    @model_validator(mode="after")
    def _decision_quota_can_be_met(self) -> TrainConfig:
        self.check_decision_quota()
        return self

    @model_validator(mode="after")
    def _selection_is_evaluated(self) -> TrainConfig:
        if self.keep == "best" and self.eval.select_on not in self.eval.splits:
            raise ValueError(
                f"keep=best selects the best policy on eval.select_on="
                f"{self.eval.select_on!r}, which must be among eval.splits {self.eval.splits}"
            )
        return self


class RolloutConfig(Frozen):
    """Where rollouts run. Only ``batch_across_jobs`` can change results: with it False (the
    default) a run gives the same groups, ledger and policy on either backend and any worker
    count (see docs/ray.md)."""

    backend: Literal["local", "ray"] = "local"
    """local: collect in the training process; ray: on Ray actors, each owning its envs and
    snapshot backend (needs the `ray` extra)."""
    workers: int = Field(2, ge=1)
    """Ray rollout actors (1 CPU each); ignored by the local backend."""
    ray_address: str | None = None
    """Address of an existing Ray cluster (e.g. `auto` or `ray://head:10001`); None starts a
    local Ray instance sized to max(workers, CPU count)."""
    batch_across_jobs: bool = False
    """Local backend only: sample all jobs of an iteration in shared policy batches (faster on
    one process, but results then depend on the batch and differ from the Ray backend's).
    False: every job is sampled on its own from a seed derived from (iteration seed, job index)."""
    parallel_jobs: int = Field(16, ge=1)
    """Local backend: Root jobs collected at once when the env's calls wait on other processes
    (browsers) and the policy can hand over its sampling state (the small policy); each job
    samples from its own seed, so results do not depend on it. 1: one job after another. Each
    job holds ceil(group size / episodes_per_env) browsers (about 100 MB each), and the jobs at
    once hold at most this many between them: 16 jobs of one browser with the web env's 8
    episodes per env and groups of 8, two jobs of 8 with episodes_per_env 1. 16 ran the web
    collector benchmark fastest here (docs/web.md, "Speed")."""
    prefetch_branches: int = Field(8, ge=0)
    """Local backend: snapshot branches restored ahead of the iteration's Suffix starts, in a
    background thread while other jobs run, when the env's calls wait on other processes
    (browsers); bounds how many are ready or restoring at once (each holds a browser, 60-80
    MB; fewer when the snapshot backend's branch pool could not also hold a whole group).
    Prefetched branches are verified like any restore, so results do not depend on it. 0: off."""
    episodes_per_env: int | None = Field(None, ge=1)
    """Episodes of a Root group that each env plays one after another (both backends): a group
    of G runs on ceil(G / this) envs in consecutive waves, and a web env starts a later wave's
    episodes in the page it already loaded instead of reloading it. None: the env kind's own
    choice (``GUIEnv.episodes_per_env``: 1, the web env 8). Changes which samples are drawn
    (later waves sample from derived seeds), not from what distribution; not used with
    batch_across_jobs. See docs/web.md ("Speed") for what it saves."""
    max_retries: int = Field(3, ge=0)
    """How many times a group is re-run after a fault before the run fails: a crashed or hung
    env (both backends; the group restarts from its reset or snapshot in fresh envs, with the
    same seed) or, on Ray, a dead worker (retried on a fresh actor)."""
    job_timeout_s: float | None = Field(900.0, gt=0)
    """Ray only: a worker that returns no result for this long is killed and its jobs retried
    on a fresh actor (a hang outside the env's own step limits); None: wait forever."""
    ray_start_timeout_s: float = Field(600.0, gt=0)
    """Ray only: bound on joining ``ray_address`` (an address that does not answer is an error
    after this long) and on starting each worker actor (one that no live node can host - too few
    CPUs or ``ray_worker_resources`` - is an error at start-up and a counted fault later, e.g.
    after its node was lost)."""
    ray_worker_resources: dict[str, float] = Field(default_factory=dict)
    """Ray only: custom resources each worker actor asks for besides its 1 CPU, e.g.
    ``{env_node: 1}`` so that workers run only on nodes started with ``ray start
    --resources='{"env_node": 8}'`` (not on the learner's head node; docs/ray.md). A resource
    no node of the cluster has is an error naming this field."""

    @model_validator(mode="after")
    def _local_batching(self) -> RolloutConfig:
        if self.backend == "ray" and self.batch_across_jobs:
            raise ValueError(
                "batch_across_jobs is a local-backend option; Ray collects every job on its own"
            )
        return self


ConfigurationName = Literal[
    "base",
    "sft",
    "action",
    "base_vanilla",
    "base_hybrid",
    "base_onestep",
    "action_vanilla",
    "action_hybrid",
    "sft_vanilla",
    "sft_hybrid",
]


class RunConfig(Frozen):
    """Everything one `adaroll run` needs; saved resolved next to the run."""

    seed: int = 0
    """Master seed: every random choice derives from it."""
    threads: int = Field(1, ge=1)
    """Torch intra-op threads. One is fastest for the small policy on shared CPU cores."""
    env: EnvConfig = EnvConfig()
    """Environment and snapshots."""
    policy: PolicyConfig = PolicyConfig()
    """Policy kind and options."""
    expert: ExpertConfig = ExpertConfig()
    """Who demonstrates: only verified trajectories become checkpoints either way."""
    rollout: RolloutConfig = RolloutConfig()
    """Where rollouts run (this process or Ray workers) and how samples are batched."""
    sft: SFTConfig = SFTConfig()
    """Behaviour cloning for Base (pretrain pool) and the SFT baseline (train experts)."""
    checks: ChecksConfig = ChecksConfig()
    """Checks before training that the run can mean something (never part of the experiment:
    a run may resume with other settings here)."""
    stage1: TrainConfig = TrainConfig(
        algorithm="stage1",
        budget=BudgetConfig(iterations=12),
        eval=EvalConfig(final_splits=("val",)),
    )
    """Stage I: OneStep GRPO on pivots, best checkpoint by Val Avg@4 (a selection: its
    evaluations are on the bill of every configuration started from Action)."""
    rl: TrainConfig = TrainConfig(
        budget=BudgetConfig(env_steps=18000, policy_samples=18000),
        grpo=GRPOConfig(lr=3e-4, ppo_epochs=2, mini_batches=2),
        eval=EvalConfig(every=None, every_env_steps=1000, every_policy_samples=1000),
    )
    """Stage II / vanilla / one-step budget and settings (algorithm chosen per configuration):
    the same env-step and policy-sample budget for each, evaluated at the same cost marks. The
    recipe (lr 3e-4, 2 PPO epochs x 2 mini-batches, 8 tasks per iteration) was chosen on
    Base->Vanilla alone, on val, among recipes making >= 50 optimizer steps (docs/RESULTS.md,
    "The recipe, tuned on Vanilla first"), and applies to every RL configuration. The budget
    (18,000) is the one at which Base->Vanilla makes >= 50 optimizer steps with that recipe on
    the default phone (12 iterations, 48 steps, at the 15,000 the recipe was swept at)."""
    configurations: tuple[ConfigurationName, ...] = get_args(ConfigurationName)
    """Which configurations `adaroll run` trains and reports (``action`` alone trains Stage I
    only; Base is always trained, every configuration starts from it)."""

    @model_validator(mode="after")
    def _clean_demos_need_profiles(self) -> RunConfig:
        if self.expert.device == "clean" and self.env.name != "mobile":
            raise ValueError(
                f"expert.device=clean needs an env with device profiles (mobile), "
                f"not {self.env.name!r}"
            )
        return self

    @model_validator(mode="after")
    def _self_pool_is_local(self) -> RunConfig:
        # Ray workers hold their own copy of the checkpoint store, taken when they start: a
        # Suffix job from a checkpoint the learner added later would not find it there.
        self_pool = self.stage1.pivots.self_pool or self.rl.pivots.self_pool
        if self.rollout.backend == "ray" and self_pool:
            raise ValueError("pivots.self_pool needs rollout.backend=local")
        return self


def _format_error(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        got = err.get("input")
        # a model-level check (tau_low <= tau_high) gets the whole section: its message names
        # the fields, so the section's dump would only bury it
        lines.append(
            f"{where}: {err['msg']}" + ("" if isinstance(got, dict) else f" (got {got!r})")
        )
    return "invalid config:\n  " + "\n  ".join(lines)


def set_dotted(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Apply ``a.b.c=value`` to a nested dict (for command-line overrides)."""
    *parents, leaf = dotted.split(".")
    node = data
    for key in parents:
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            raise ConfigError(f"override {dotted}: {key} is not a section")
    node[leaf] = value


def load_config(
    source: str | Path | dict[str, Any] | None = None, overrides: list[str] | None = None
) -> RunConfig:
    """Load a RunConfig from a YAML file or dict, applying ``key.path=value`` overrides.

    Anything invalid - unreadable or non-YAML text, a bad override, a wrong field, a credential
    among the options (:func:`reject_secrets`) - raises :class:`ConfigError`, nothing else."""
    if source is None:
        data: dict[str, Any] = {}
    elif isinstance(source, dict):
        data = _copy(source)
    else:
        path = Path(source)
        if not path.exists():
            raise ConfigError(f"config file {path} does not exist")
        try:
            loaded = yaml.safe_load(path.read_bytes().decode("utf-8")) or {}
        except UnicodeDecodeError as exc:
            raise ConfigError(f"config file {path} is not UTF-8 text: {exc}") from None
        except (yaml.YAMLError, RecursionError) as exc:
            raise ConfigError(f"config file {path} is not valid YAML: {exc}") from None
        if not isinstance(loaded, dict):
            raise ConfigError(
                f"config file {path} must hold a mapping, got {type(loaded).__name__}"
            )
        data = loaded
    for item in overrides or []:
        if not isinstance(item, str) or "=" not in item:
            raise ConfigError(f"override {item!r} must look like key.path=value")
        key, raw = item.split("=", 1)
        try:
            value = yaml.safe_load(raw)
        except (yaml.YAMLError, RecursionError) as exc:
            raise ConfigError(f"override {item!r}: the value is not valid YAML: {exc}") from None
        set_dotted(data, key.strip(), value)
    reject_secrets(data)
    try:
        # Merge onto the defaults, so that a partial section keeps the section's own defaults
        # (e.g. stage1's algorithm and budget) instead of the section class's generic ones.
        merged = _merge(RunConfig().model_dump(), data)
        env = merged.get("env")
        if (
            isinstance(env, dict)
            and env.get("name") != "mobile"
            and isinstance(env.get("options"), dict)
        ):
            given = (
                data.get("env", {}).get("options", {}) if isinstance(data.get("env"), dict) else {}
            )
            if not isinstance(given, dict) or "device" not in given:
                env["options"].pop("device", None)  # the mobile default, not an option of this env
        return RunConfig.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(_format_error(exc)) from None
    except RecursionError:
        raise ConfigError("invalid config: nested too deeply") from None


def _copy(data: dict[str, Any]) -> dict[str, Any]:
    """A deep copy (overrides must not change the caller's dict)."""
    import copy

    try:
        return copy.deepcopy(data)
    except RecursionError:
        raise ConfigError("invalid config: nested too deeply") from None


SECRET_NAMES = frozenset(
    {
        "api_key",
        "apikey",
        "secret",
        "password",
        "passwd",
        "token",
        "access_token",
        "auth_token",
        "bearer_token",
        "authorization",
        "client_secret",
        "secret_key",
        "private_key",
        "credentials",
    }
)
"""Option names (lower-cased, ``-`` read as ``_``) that would hold a credential; names ending in
``_api_key``, ``_secret``, ``_password`` or ``_token`` count too. ``api_key_env`` (the *name*
of the variable holding the key) is fine."""


def _is_secret_name(name: str) -> bool:
    n = name.lower().replace("-", "_")
    return n in SECRET_NAMES or n.endswith(
        ("_api_key", "_apikey", "_secret", "_password", "_token")
    )


def reject_secrets(data: Any, where: str = "") -> None:
    """Raise :class:`ConfigError` if any mapping in ``data`` has a credential-like key.

    API keys and tokens come only from environment variables (e.g. ``api_key_env`` of the remote
    policy names the variable), so that no config dump, log or run directory ever holds one.
    Also rejects what no config can contain: NaN (a saved config must equal itself) and
    self-referencing data (a recursive YAML alias)."""
    stack: list[tuple[Any, str, frozenset[int]]] = [(data, where, frozenset())]
    while stack:
        node, path, above = stack.pop()
        if isinstance(node, float) and math.isnan(node):
            raise ConfigError(f"{path or '(top level)'}: NaN is not a valid config value")
        if not isinstance(node, (dict, list, tuple)):
            continue
        if id(node) in above:
            raise ConfigError(
                f"{path or '(top level)'}: a value that contains itself (recursive YAML alias)"
            )
        inside = above | {id(node)}
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            child = f"{path}.{key}" if path else str(key)
            if isinstance(node, dict) and isinstance(key, str) and _is_secret_name(key):
                raise ConfigError(
                    f"{child}: credentials are never config values (a config is "
                    "saved in the run directory); put the key in an environment "
                    "variable and name that variable (e.g. api_key_env: "
                    "OPENAI_API_KEY)"
                )
            stack.append((value, child, inside))


def _merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict) and key not in _OPAQUE:
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


_OPAQUE = ("options", "suite_options", "budget")  # replaced whole, never merged


def dump_config(config: BaseModel) -> str:
    """The config as YAML (what run directories store); refuses one holding a credential."""
    data = config.model_dump(mode="json")
    reject_secrets(data)
    return yaml.safe_dump(data, sort_keys=False)
