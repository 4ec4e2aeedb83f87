"""A framework's sample as text: the rollout layer's :class:`~adaroll.rollout.session.Session`
behind a prompt and a text action, or an idle row.

* :class:`RowSession` - what one framework sample drives: the prompt text of its current state
  (AdaRoll's user prompt: instruction, recent actions, element list), ``act(text)`` to play one
  action given in AdaRoll's text format (the reply is the new state as text, or why nothing
  happened), its reward and cost (the session's), and whether it faulted. The step budget, the
  reward and the cost are the session's: one decision and no env step for a OneStep start, the
  task's remaining steps otherwise; expert match or task success.
* An **idle** row (:meth:`RowSession.idle`) only fills a framework's fixed batch while the
  scheduler waits for outcomes: no start and no env, one generation per sample (billed as
  ``overhead``), a constant reward, no gradient.

An unparseable action or one the env rejects ends the episode as a failure; an
:class:`~adaroll.envs.base.EnvFault` ends it as *faulted* and closes its env: the caller must not
train on its group (see :mod:`adaroll.integrations.feed`).
"""

from __future__ import annotations

from adaroll.actions import Action, ActionParseError, parse_action
from adaroll.policies.base import Context
from adaroll.policies.prompts import system_prompt, user_prompt
from adaroll.rollout.jobs import Cost, Job
from adaroll.rollout.session import Outcome, Session

IDLE = "idle"
"""The name of an idle row (beside the start kinds) in the adapters' tables and counts."""

_IDLE_COST = Cost(policy_samples=1)
"""An idle sample is one generation, which acts nowhere."""


class RowSession:
    """One framework sample: a session of ``job`` shown as text (``job`` and ``session`` None:
    an idle row)."""

    def __init__(self, job: Job | None, session: Session | None, history_window: int) -> None:
        self.job, self.session, self.history_window = job, session, history_window

    @classmethod
    def idle(cls) -> RowSession:
        return cls(None, None, 0)

    @property
    def name(self) -> str:
        """The row's start kind, or ``idle``."""
        return self.job.kind.value if self.job is not None else IDLE

    # -- what the model sees -----------------------------------------------------------------------
    def context(self) -> Context:
        assert self.session is not None, "an idle row has no state"
        return self.session.context(self.history_window)

    def prompt(self) -> str:
        """The state as text: AdaRoll's user prompt (instruction, recent actions, elements)."""
        if self.session is None:
            return "(idle row: no task, answer done())"
        return user_prompt(self.context(), history_len=self.history_window)

    @staticmethod
    def system_prompt() -> str:
        """AdaRoll's system prompt: the agent's role and the action-format help."""
        return system_prompt()

    # -- the session's outcome ---------------------------------------------------------------------
    @property
    def steps_left(self) -> int:
        """Actions the sample may still take (0 for an idle row and once the episode is over)."""
        return self.session.steps_left if self.session is not None else 0

    @property
    def decisions(self) -> int:
        """Actions the model produced (parsed or not)."""
        return self.session.decisions if self.session is not None else 0

    @property
    def cost(self) -> Cost:
        return self.session.cost if self.session is not None else _IDLE_COST

    @property
    def fault(self) -> Exception | None:
        return self.session.fault if self.session is not None else None

    def reward(self) -> float:
        """AdaRoll's reward: expert match for OneStep, task success (1/0) otherwise; 0 idle."""
        return self.session.reward() if self.session is not None else 0.0

    # -- acting -------------------------------------------------------------------------------------
    def act(self, text: str) -> str:
        """Play one action given as text; the new state as text (or why nothing happened)."""
        session = self.session
        if session is None or session.done:
            return "The episode is over: no more actions are taken."
        action: Action | None
        try:
            action, why = parse_action(text), ""
        except ActionParseError as exc:
            action, why = None, str(exc)
        acted = session.act(action)
        if acted.outcome is Outcome.INVALID:
            return f"Invalid action ({why}); the episode ends as a failure."
        if acted.outcome is Outcome.MATCHED:
            return "Action recorded (one-step start: nothing is executed)."
        assert action is not None
        if acted.outcome is Outcome.REJECTED:
            return (
                f"The screen rejected {action.to_text()}: {acted.detail}; "
                "the episode ends as a failure."
            )
        if acted.outcome is Outcome.FAULTED:
            session.close()
            return f"The environment broke: {acted.detail}"
        if acted.outcome is Outcome.ENDED:
            return f"The episode ended ({'success' if session.success else 'failure'})."
        return self.prompt()

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
