"""Run many sessions in lockstep so that every step is one batched policy call."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from adaroll.envs.base import EnvFault, GUIEnv
from adaroll.policies.base import Context, SampledAction
from adaroll.rollout.concurrent import call_each, concurrent_envs
from adaroll.rollout.jobs import Decision
from adaroll.rollout.session import Session


class Sampler(Protocol):
    """What draws the actions: a :class:`~adaroll.policies.base.Policy`, or a view of one."""

    def sample(
        self, contexts: Sequence[Context], n: int, *, greedy: bool = False
    ) -> list[list[SampledAction]]: ...


@dataclass
class Episode:
    """One session rolled from its start to its end, and every decision it made."""

    session: Session
    decisions: list[Decision] = field(default_factory=list)

    @property
    def success(self) -> bool:
        return self.session.success

    @property
    def env_steps(self) -> int:
        return self.session.cost.env_steps

    @property
    def fault(self) -> EnvFault | None:
        """Set when the env broke mid-episode: the episode is incomplete and must not be used."""
        return self.session.fault


def run_episodes(
    policy: Sampler, sessions: Sequence[Session], history_window: int
) -> list[Episode]:
    """Roll every session from its current state to termination or truncation.

    Each round samples one action for every live session in one policy call
    (:meth:`Session.context` shows the last ``history_window`` actions) and plays them
    (:meth:`Session.act`: an unparseable sample or a rejected action ends its session as a
    failure, the decision kept; an :class:`EnvFault` ends only its own session, as faulted, and
    the others run on - the caller decides what a fault costs). Envs that allow it
    (:attr:`~adaroll.envs.base.GUIEnv.concurrent_calls`) take each round's steps at once, from
    threads; the episodes are the same either way.
    """
    episodes = [Episode(session) for session in sessions]
    envs: list[GUIEnv] = [s.env for s in sessions if s.env is not None]
    concurrent = len(envs) == len(sessions) and concurrent_envs(envs)
    active = [e for e in episodes if not e.session.done]
    while active:
        contexts = [e.session.context(history_window) for e in active]
        samples = policy.sample(contexts, 1)
        for episode, context, (sample,) in zip(active, contexts, samples, strict=True):
            episode.decisions.append(Decision(context, sample))
        # the envs act at once when they allow it (browsers); every session plays its own
        call_each(
            lambda pair: pair[0].session.act(pair[1].action),
            [(e, s[0]) for e, s in zip(active, samples, strict=True)],
            concurrent=concurrent,
        )
        active = [e for e in active if not e.session.done]
    return episodes
