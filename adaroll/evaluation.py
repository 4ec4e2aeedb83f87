"""Avg@k / Pass@k: k independent root attempts per task, run in lockstep batches.

A batch holds as many envs as the env kind affords at once (``GUIEnv.max_live``), and each env
plays ``GUIEnv.episodes_per_env`` consecutive attempts (the same task's, in the order the
attempts are listed), one per wave of the batch: a web env then starts the later attempts in the
page it already loaded."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from adaroll.algos.metrics import split_metrics
from adaroll.envs.base import EnvFault, GUIEnv, TaskSpec
from adaroll.policies.base import Policy
from adaroll.rollout.concurrent import call_each, concurrent_envs
from adaroll.rollout.episodes import Episode, run_episodes
from adaroll.rollout.jobs import RolloutFailed, close_quietly
from adaroll.rollout.session import Session
from adaroll.seeding import seed_everything

log = logging.getLogger("adaroll")


@dataclass(frozen=True)
class SplitResult:
    avg: float
    pass_: float
    env_steps: int
    policy_samples: int
    episodes: int
    outcomes: dict[str, list[bool]]

    def by_template(self) -> dict[str, dict[str, list[bool]]]:
        """The outcomes split by template, templates sorted: a split's Avg@k can hide templates
        always solved beside ones never solved, and only templates in between give a group of
        samples different rewards to learn from."""
        groups: dict[str, dict[str, list[bool]]] = {}
        for task_id, outcomes in self.outcomes.items():
            groups.setdefault(TaskSpec.from_id(task_id).template, {})[task_id] = outcomes
        return dict(sorted(groups.items()))


def evaluate_split(
    policy: Policy,
    make_env: Callable[[], GUIEnv],
    tasks: Sequence[TaskSpec],
    *,
    k: int,
    seed: int,
    history_window: int | None = None,
    batch: int = 256,
    max_retries: int = 3,
) -> SplitResult:
    """Run ``k`` root attempts of every task (sampling from the policy) and score them.
    ``history_window``: previous actions shown to the policy (None: its own,
    :attr:`~adaroll.policies.base.Policy.history_window`)."""
    if history_window is None:
        history_window = policy.history_window
    seed_everything("eval", seed, policy=policy)
    attempts = [t for t in tasks for _ in range(k)]
    outcomes: dict[str, list[bool]] = {t.id: [] for t in tasks}
    env_steps = policy_samples = 0
    envs = [make_env()] if attempts else []
    try:
        # the env class says how many instances it can afford at once; they are reused by reset
        batch = max(1, min(batch, envs[0].max_live)) if envs else batch
        per_env = max(1, envs[0].episodes_per_env) if envs else 1
        for start in range(0, len(attempts), batch * per_env):
            chunk = attempts[start : start + batch * per_env]
            for retry in range(max_retries + 1):
                envs += [make_env() for _ in range(-(-len(chunk) // per_env) - len(envs))]
                broken: EnvFault | None
                try:
                    episodes = _attempt_in_waves(policy, envs, chunk, per_env, history_window)
                except EnvFault as fault:
                    episodes, broken = [], fault
                else:
                    broken = next((e.fault for e in episodes if e.fault is not None), None)
                if broken is None:
                    break
                # a crashed or hung env: replace every env of the chunk and run it again, so
                # no attempt is scored on a broken browser
                log.warning("evaluation chunk re-run after an env fault: %s", broken)
                for env in envs:
                    close_quietly(env)
                envs = []
                if retry == max_retries:
                    raise RolloutFailed(
                        f"evaluation failed {retry + 1} times; last: {broken}"
                    ) from broken
            for task, episode in zip(chunk, episodes, strict=True):
                outcomes[task.id].append(episode.success)
                env_steps += episode.env_steps
                policy_samples += len(episode.decisions)
    finally:
        for env in envs:
            close_quietly(env)
    metrics = split_metrics(outcomes, k)
    return SplitResult(
        metrics["avg"], metrics["pass"], env_steps, policy_samples, len(attempts), outcomes
    )


def _attempt_in_waves(
    policy: Policy,
    envs: Sequence[GUIEnv],
    tasks: Sequence[TaskSpec],
    per_env: int,
    history_window: int,
) -> list[Episode]:
    """Env i plays ``tasks[i * per_env : (i + 1) * per_env]``, one attempt per wave; the
    episodes come back in the order of ``tasks``."""
    episodes: list[Episode | None] = [None] * len(tasks)
    for wave in range(per_env):
        indices = range(wave, len(tasks), per_env)
        for i, episode in zip(
            indices,
            _attempt(policy, envs[: len(indices)], [tasks[i] for i in indices], history_window),
            strict=True,
        ):
            episodes[i] = episode
    return [e for e in episodes if e is not None]


def _attempt(
    policy: Policy, envs: Sequence[GUIEnv], tasks: Sequence[TaskSpec], history_window: int
) -> list[Episode]:
    def start(pair: tuple[GUIEnv, TaskSpec]) -> Session:
        env, task = pair
        obs, info = env.reset(options={"task": task})
        return Session(env, str(info.get("instruction", env.instruction)), (), obs)

    # browsers load their pages at once (the first fault is raised once all resets are over)
    sessions = call_each(
        start, list(zip(envs, tasks, strict=True)), concurrent=concurrent_envs(envs)
    )
    return run_episodes(policy, sessions, history_window)
