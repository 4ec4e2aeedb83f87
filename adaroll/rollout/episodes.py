"""Run many episodes in lockstep so that every step is one batched policy call."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from adaroll.actions import Action
from adaroll.envs.base import EnvFault, GUIEnv, InvalidActionError, Observation
from adaroll.policies.base import Context, SampledAction
from adaroll.rollout.concurrent import call_each, concurrent_envs
from adaroll.rollout.jobs import Decision

StepResult = tuple[Observation, float, bool, bool, dict[str, Any]]


class Sampler(Protocol):
    """What draws the actions: a :class:`~adaroll.policies.base.Policy`, or a view of one."""

    def sample(
        self, contexts: Sequence[Context], n: int, *, greedy: bool = False
    ) -> list[list[SampledAction]]: ...


@dataclass
class Episode:
    """One rollout from some start state to its end."""

    decisions: list[Decision] = field(default_factory=list)
    success: bool = False
    env_steps: int = 0
    invalid_samples: int = 0
    fault: EnvFault | None = None
    """Set when the env broke mid-episode: the episode is incomplete and must not be used."""


@dataclass
class _Live:
    env: GUIEnv
    instruction: str
    history: list[Action]
    observation: Observation
    episode: Episode


def run_episodes(
    policy: Sampler,
    envs: Sequence[GUIEnv],
    starts: Sequence[tuple[str, tuple[Action, ...], Observation]],
    history_window: int,
) -> list[Episode]:
    """Roll every env from its current state to termination or truncation.

    ``starts[i]`` = (instruction, actions already taken, current observation) of ``envs[i]``.
    An unparseable sample (``action is None``) or an action the env rejects ends its episode
    as a failure: the decision stays in the episode (it is trained on with reward 0).
    An :class:`EnvFault` (crashed or hung env) stops only its own episode, recorded in
    ``Episode.fault``; the other episodes run on (the caller decides what a fault costs).
    Envs that allow it (:attr:`~adaroll.envs.base.GUIEnv.concurrent_calls`) take each
    lockstep round's steps at once, from threads; the episodes are the same either way.
    """
    live = [
        _Live(env, instr, list(hist), obs, Episode())
        for env, (instr, hist, obs) in zip(envs, starts, strict=True)
    ]
    concurrent = concurrent_envs(envs)
    active = list(range(len(live)))
    while active:
        contexts = [_context(live[i], history_window) for i in active]
        samples = policy.sample(contexts, 1)
        acting: list[tuple[int, Action]] = []
        for i, context, (sample,) in zip(active, contexts, samples, strict=True):
            state = live[i]
            state.episode.decisions.append(Decision(context, sample))
            if sample.action is None:
                state.episode.invalid_samples += 1
            else:
                acting.append((i, sample.action))
        # the envs act at once when they allow it (browsers); outcomes are handled in order
        outcomes = call_each(
            lambda item: _try_step(live[item[0]].env, item[1]), acting, concurrent=concurrent
        )
        still: list[int] = []
        for (i, action), outcome in zip(acting, outcomes, strict=True):
            state = live[i]
            if isinstance(outcome, InvalidActionError):
                state.episode.invalid_samples += 1
                continue
            if isinstance(outcome, EnvFault):
                state.episode.fault = outcome
                continue
            _, _, terminated, truncated, info = outcome
            state.episode.env_steps += 1
            state.history.append(action)
            state.observation = outcome[0]
            if terminated or truncated:
                state.episode.success = bool(info.get("success", False))
            else:
                still.append(i)
        active = still
    return [state.episode for state in live]


def _try_step(env: GUIEnv, action: Action) -> StepResult | InvalidActionError | EnvFault:
    """One step; the two failures an episode survives (or records) come back as values."""
    try:
        return env.step(action)
    except (InvalidActionError, EnvFault) as exc:
        return exc


def _context(state: _Live, window: int) -> Context:
    history = tuple(state.history[-window:]) if window > 0 else ()
    return Context(state.instruction, state.observation, history)
