"""A session: one live start of one sample, what every trainer rolls out.

A start (:mod:`adaroll.rollout.starts`) opens one session per sample of a job; a session holds
the state the policy sees (:meth:`Session.context`), plays one action at a time
(:meth:`Session.act`), knows its reward as AdaRoll defines it (:meth:`Session.reward`: expert
match for a OneStep start, task success otherwise) and counts what it cost in the ledger's units
(:attr:`Session.cost`: policy samples, env steps, invalid samples). AdaRoll's collector runs many
sessions in lockstep (:func:`adaroll.rollout.episodes.run_episodes`); a framework adapter (TRL,
verl) drives one session per sample through :class:`adaroll.rollout.sessions.Starts`. Both see
the same rules:

* an unparseable sample (``None``) or an action the env rejects
  (:class:`~adaroll.envs.base.InvalidActionError`) ends the session as a failure (an invalid
  sample: the decision is still a policy sample, trained on with reward 0);
* an :class:`~adaroll.envs.base.EnvFault` (a crashed or hung env) ends it as *faulted*: its
  group must not be trained on and is collected again (:mod:`adaroll.rollout.retries`);
* a OneStep session takes one action, matched against the expert's, and steps no env.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from adaroll.actions import Action, ActionMatcher
from adaroll.envs.base import EnvFault, GUIEnv, InvalidActionError, Observation
from adaroll.policies.base import Context
from adaroll.rollout.jobs import Cost, close_quietly


class Outcome(Enum):
    """What one :meth:`Session.act` did."""

    MATCHED = "matched"
    """A OneStep action, scored against the expert's (no env step); the session is over."""
    STEPPED = "stepped"
    """The env took the action and the episode goes on."""
    ENDED = "ended"
    """The env took the action and the episode ended (see :attr:`Session.success`)."""
    INVALID = "invalid"
    """The sample did not parse: the session ends as a failure."""
    REJECTED = "rejected"
    """The env rejected the action: the session ends as a failure."""
    FAULTED = "faulted"
    """The env broke: the session ends faulted (its group is collected again)."""
    OVER = "over"
    """The session had ended before: nothing happened (nor was counted)."""


@dataclass(frozen=True)
class Acted:
    """An :class:`Outcome` and, for a rejected action or a fault, the error's text."""

    outcome: Outcome
    detail: str = ""


class Session:
    """One sample's rollout from its start (see the module docstring).

    ``env`` is None for a OneStep session, which then needs the ``expert``'s action and the
    ``matcher`` that scores a sample against it."""

    def __init__(
        self,
        env: GUIEnv | None,
        instruction: str,
        history: Sequence[Action],
        observation: Observation,
        *,
        expert: Action | None = None,
        matcher: ActionMatcher | None = None,
    ) -> None:
        self.env = env
        self.rolls_out = env is not None
        """Whether the session plays an episode in an env (False: one OneStep decision)."""
        self.instruction = instruction
        self.history = list(history)
        self.observation = observation
        self.expert, self.matcher = expert, matcher
        self.cost = Cost()
        """What the session ran up since it started: policy samples, env steps, invalid
        samples (the start's own cost, restores, is its start's: :class:`~adaroll.rollout.starts.Started`)."""
        self.done = False
        self.success = False
        """The env's verdict on an ended episode."""
        self.match = 0.0
        """A OneStep session's reward: the expert match of its action."""
        self.fault: EnvFault | None = None

    @property
    def decisions(self) -> int:
        """Actions the policy produced so far, parsed or not (the session's policy samples)."""
        return self.cost.policy_samples

    @property
    def steps_left(self) -> int:
        """Actions the session may still take: one decision for OneStep, the env's remaining
        steps otherwise, 0 once it is over."""
        if self.done:
            return 0
        if self.env is None:
            return 1 - self.decisions if not self.rolls_out else 0
        return max(0, self.env.max_steps - self.env.steps_taken)

    def context(self, window: int) -> Context:
        """What the policy sees now, showing the last ``window`` actions."""
        return Context.at(self.instruction, self.observation, self.history, window)

    def act(self, action: Action | None) -> Acted:
        """Play one sampled action (``None``: the sample did not parse)."""
        if self.done:
            return Acted(Outcome.OVER)
        self.cost = self.cost + Cost(policy_samples=1)
        if action is None:
            return self._end(Outcome.INVALID, Cost(invalid_samples=1))
        if not self.rolls_out:
            assert self.expert is not None and self.matcher is not None
            self.match = self.matcher.reward(action, self.expert)
            return self._end(Outcome.MATCHED)
        if self.env is None:
            raise RuntimeError("the session was closed before its episode ended")
        try:
            obs, _, terminated, truncated, info = self.env.step(action)
        except InvalidActionError as exc:
            return self._end(Outcome.REJECTED, Cost(invalid_samples=1), str(exc))
        except EnvFault as exc:
            self.fault = exc
            return self._end(Outcome.FAULTED, detail=str(exc))
        self.cost = self.cost + Cost(env_steps=1)
        self.history.append(action)
        self.observation = obs
        if terminated or truncated:
            self.success = bool(info.get("success", False))
            return self._end(Outcome.ENDED)
        return Acted(Outcome.STEPPED)

    @classmethod
    def faulted(cls, fault: EnvFault) -> Session:
        """A session whose start broke (the env faulted while it was being opened): over and
        faulted from the beginning, without an env."""
        session = cls(None, "", (), Observation((), (1, 1)))
        session.fault, session.done = fault, True
        return session

    def _end(self, outcome: Outcome, cost: Cost | None = None, detail: str = "") -> Acted:
        self.done = True
        if cost is not None:
            self.cost = self.cost + cost
        return Acted(outcome, detail)

    def reward(self) -> float:
        """AdaRoll's reward: the expert match for OneStep, task success (1/0) otherwise."""
        if not self.rolls_out:
            return self.match
        return 1.0 if self.success else 0.0

    def close(self) -> None:
        """Close the session's env (a session that owns it: a framework's sample); its outcome
        and cost stay readable."""
        if self.env is not None:
            close_quietly(self.env)
            self.env = None
