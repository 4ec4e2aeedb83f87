"""Typed, frozen run configuration, loaded from YAML and validated field by field.

Every field carries a docstring (pydantic reads attribute docstrings into the schema), so
``adaroll config show`` and the docs are generated from this file. A bad value fails at load
with the dotted field path and the offending value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator


class ConfigError(ValueError):
    """A configuration file or override is invalid; the message names field and value."""


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class EnvConfig(Frozen):
    name: str = "mobile"
    """Registered environment name (`adaroll envs list`)."""
    snapshot_backend: str = "memory"
    """Registered snapshot backend used for Suffix starts: memory, replay or criu."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Keyword options passed to the environment factory."""
    suite_options: dict[str, Any] = Field(default_factory=dict)
    """Keyword options passed to the task suite (split sizes, suite seed)."""


class ExpertConfig(Frozen):
    kind: Literal["scripted", "remote"] = "scripted"
    """scripted: the env's own solvers; remote: a model behind an OpenAI-compatible endpoint."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Remote expert options (base_url, model, api_key_env, ...; see docs/llm.md)."""


class PolicyConfig(Frozen):
    kind: str = "small"
    """Registered policy kind: small, hf or remote."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Keyword options of the policy's own config."""
    history: int = Field(4, ge=0)
    """Number of previous actions shown to the policy."""


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
    """Weight of the KL penalty to the starting policy (0 disables it)."""
    normalize_std: bool = True
    """Divide group advantages by the group's standard deviation."""
    aggregation: Literal["token-mean", "sequence-mean"] = "token-mean"
    """How per-decision losses are averaged."""
    ppo_epochs: int = Field(1, ge=1)
    """Gradient steps on each batch of groups (ratios differ from 1 after the first)."""
    max_grad_norm: float = Field(1.0, gt=0)
    """Gradient clipping norm."""
    micro_batch: int = Field(512, ge=1)
    """Decisions per forward/backward pass; gradients accumulate to the same update."""


class PivotConfig(Frozen):
    scorer: str = "disagreement"
    """Registered pivot scorer: disagreement, reward_variance, entropy, all, random."""
    n_samples: int = Field(8, ge=2)
    """Policy samples per checkpoint used to score it (N)."""
    tau_dis: float = Field(0.45, ge=0, le=1)
    """Checkpoints scoring strictly above this are pivots."""
    fallback_top_k: int = Field(2, ge=0)
    """A task with no checkpoint above tau_dis uses its k highest-scoring checkpoints."""
    budget_top_k: int | None = Field(None, ge=1)
    """If set, keep exactly the k highest-scoring checkpoints overall (budget-matched ablations)."""


class SchedulerConfig(Frozen):
    tau_low: float = Field(0.25, ge=0, le=1)
    """Tasks with p(x) below this are trained Local (OneStep on pivots)."""
    tau_high: float = Field(0.75, ge=0, le=1)
    """Tasks with p(x) above this are trained Root; in between, Suffix."""
    tau_suffix: float = Field(0.75, ge=0, le=1)
    """Suffix success rate above which the frontier moves to the previous pivot (paper: 0.75 main text, 0.5 appendix)."""
    routing_probes: int = Field(4, ge=1)
    """Root rollouts that estimate p(x) for routing."""
    root_probes: int = Field(2, ge=2)
    """Root rollouts per visit of a Root task; updated only when their outcomes differ."""
    local_reeval_every: int = Field(3, ge=1)
    """Local tasks re-estimate p(x) every this many visits."""
    tasks_per_iteration: int = Field(8, ge=1)
    """Tasks visited per iteration (round robin over the train split)."""
    pivots_per_iteration: int = Field(64, ge=1)
    """Stage I: OneStep groups per update (round robin over all pivots)."""

    @model_validator(mode="after")
    def _ordered(self) -> SchedulerConfig:
        if self.tau_low > self.tau_high:
            raise ValueError(f"tau_low ({self.tau_low}) must not exceed tau_high ({self.tau_high})")
        return self


class BudgetConfig(Frozen):
    iterations: int | None = Field(None, ge=1)
    """Stop after this many iterations."""
    env_steps: int | None = Field(None, ge=1)
    """Stop once this many training env steps were spent."""
    samples: int | None = Field(None, ge=1)
    """Stop once this many training samples entered updates."""

    @model_validator(mode="after")
    def _some_limit(self) -> BudgetConfig:
        if self.iterations is None and self.env_steps is None and self.samples is None:
            raise ValueError("a budget needs at least one of iterations, env_steps, samples")
        return self


class EvalConfig(Frozen):
    k: int = Field(4, ge=1)
    """Root attempts per task for Avg@k / Pass@k."""
    every: int = Field(5, ge=1)
    """Evaluate every this many iterations (and at the end)."""
    splits: tuple[str, ...] = ("train",)
    """Task splits evaluated periodically (the learning curve)."""
    final_splits: tuple[str, ...] = ("train", "heldout")
    """Task splits evaluated at the end of a phase."""


class TrainConfig(Frozen):
    """One RL training phase (stage1, hybrid or vanilla)."""

    algorithm: Literal["stage1", "hybrid", "vanilla"] = "hybrid"
    """Which scheduler drives the phase."""
    budget: BudgetConfig = BudgetConfig(iterations=20)
    """When to stop."""
    grpo: GRPOConfig = GRPOConfig()
    """GRPO group and update settings."""
    pivots: PivotConfig = PivotConfig()
    """Pivot scoring and selection."""
    scheduler: SchedulerConfig = SchedulerConfig()
    """Routing thresholds and cadences."""
    eval: EvalConfig = EvalConfig()
    """Periodic evaluation."""


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
    max_retries: int = Field(3, ge=0)
    """Ray backend: how many times a job whose worker died is retried on a fresh actor before
    the run fails."""

    @model_validator(mode="after")
    def _local_batching(self) -> RolloutConfig:
        if self.backend == "ray" and self.batch_across_jobs:
            raise ValueError("batch_across_jobs is a local-backend option; Ray collects every job on its own")
        return self


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
    stage1: TrainConfig = TrainConfig(algorithm="stage1", budget=BudgetConfig(iterations=12),
                                      eval=EvalConfig(final_splits=("train",)))
    """Stage I: OneStep GRPO on pivots, best checkpoint by Train Avg@4."""
    rl: TrainConfig = TrainConfig(budget=BudgetConfig(env_steps=15000, iterations=60),
                                  grpo=GRPOConfig(lr=3e-4), eval=EvalConfig(every=4))
    """Stage II / vanilla budget and settings (algorithm chosen per configuration)."""
    configurations: tuple[str, ...] = (
        "base", "sft", "base_vanilla", "base_hybrid", "action_vanilla", "action_hybrid",
    )  # fmt: skip
    """Which of the paper's configurations `adaroll run` trains and reports."""


def _format_error(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        lines.append(f"{where}: {err['msg']} (got {err.get('input')!r})")
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
    """Load a RunConfig from a YAML file or dict, applying ``key.path=value`` overrides."""
    if source is None:
        data: dict[str, Any] = {}
    elif isinstance(source, dict):
        data = dict(source)
    else:
        path = Path(source)
        if not path.exists():
            raise ConfigError(f"config file {path} does not exist")
        try:
            loaded = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"config file {path} is not valid YAML: {exc}") from None
        if not isinstance(loaded, dict):
            raise ConfigError(f"config file {path} must hold a mapping, got {type(loaded).__name__}")
        data = loaded
    for item in overrides or []:
        if "=" not in item:
            raise ConfigError(f"override {item!r} must look like key.path=value")
        key, raw = item.split("=", 1)
        set_dotted(data, key.strip(), yaml.safe_load(raw))
    try:
        # Merge onto the defaults, so that a partial section keeps the section's own defaults
        # (e.g. stage1's algorithm and budget) instead of the section class's generic ones.
        return RunConfig.model_validate(_merge(RunConfig().model_dump(), data))
    except ValidationError as exc:
        raise ConfigError(_format_error(exc)) from None


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
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False)
