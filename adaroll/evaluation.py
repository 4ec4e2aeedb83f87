"""Avg@k / Pass@k: k independent root attempts per task, run in lockstep batches."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from adaroll.algos.metrics import split_metrics
from adaroll.envs.base import GUIEnv, TaskSpec
from adaroll.policies.base import Policy
from adaroll.rollout.episodes import run_episodes
from adaroll.seeding import seed_everything


@dataclass(frozen=True)
class SplitResult:
    avg: float
    pass_: float
    env_steps: int
    policy_samples: int
    episodes: int
    outcomes: dict[str, list[bool]]


def evaluate_split(
    policy: Policy,
    make_env: Callable[[], GUIEnv],
    tasks: Sequence[TaskSpec],
    *,
    k: int,
    history_window: int,
    seed: int,
    batch: int = 256,
) -> SplitResult:
    """Run ``k`` root attempts of every task (sampling from the policy) and score them."""
    seed_everything("eval", seed, policy=policy)
    attempts = [t for t in tasks for _ in range(k)]
    outcomes: dict[str, list[bool]] = {t.id: [] for t in tasks}
    env_steps = policy_samples = 0
    envs = [make_env()] if attempts else []
    try:
        # the env class says how many instances it can afford at once; they are reused by reset
        batch = max(1, min(batch, envs[0].max_live)) if envs else batch
        for start in range(0, len(attempts), batch):
            chunk = attempts[start : start + batch]
            envs += [make_env() for _ in range(len(chunk) - len(envs))]
            starts = []
            for env, task in zip(envs, chunk, strict=False):
                obs, info = env.reset(options={"task": task})
                starts.append((str(info.get("instruction", env.instruction)), (), obs))
            episodes = run_episodes(policy, envs[: len(chunk)], starts, history_window)
            for task, episode in zip(chunk, episodes, strict=True):
                outcomes[task.id].append(episode.success)
                env_steps += episode.env_steps
                policy_samples += len(episode.decisions)
    finally:
        for env in envs:
            env.close()
    metrics = split_metrics(outcomes, k)
    return SplitResult(metrics["avg"], metrics["pass"], env_steps, policy_samples, len(attempts),
                       outcomes)
