"""AdaRoll inside TRL's ``GRPOTrainer``: adaptive rows, restored starts, AdaRoll's rewards and bill.

:class:`AdaRollTRL` gives the three things ``GRPOTrainer`` takes::

    hub = AdaRollTRL(scheduler, starts, ledger, num_generations=G)
    trainer = GRPOTrainer(model, reward_funcs=[hub.reward], train_dataset=hub.dataset(),
                          environment_factory=hub.environment_factory,
                          args=GRPOConfig(..., num_generations=G, shuffle_dataset=False, max_steps=N),
                          processing_class=tokenizer)

* ``dataset()`` - an endless ``datasets.IterableDataset`` of *slot* rows; each slot is bound to
  the scheduler's next job when TRL resets its first environment
  (:class:`~adaroll.integrations.feed.ScheduleFeed`: plan after observe, idle rows at an
  iteration barrier). Rows may instead name a start themselves (a static dataset): columns
  ``kind`` (onestep/suffix/root), ``task_id`` and ``checkpoint_id``.
* ``environment_factory`` - :class:`AdaRollEnv`: ``reset(**row)`` opens the row's start through
  the rollout layer's :class:`~adaroll.rollout.sessions.Starts` (Suffix branches were restored
  in background threads as soon as the group was planned; TRL's resets, made one by one, only
  take them) and returns the state as text (:class:`~adaroll.integrations.rows.RowSession`);
  its one tool, ``act(action)``, plays one action in AdaRoll's text format. The step budget
  follows the start kind (one decision for Local). A model that answers with text instead of a
  tool call has that text played as its last action.
* ``reward`` - the reward function: AdaRoll's reward per sample (expert match for Local, task
  success otherwise). It reports each group to the feed, which bills it in AdaRoll's
  :class:`~adaroll.training.ledger.Ledger` and lets the scheduler observe it (rows that name
  their start are billed at once, by the same :func:`~adaroll.training.bill.bill_groups`). Groups that must
  not train - routing probes, idle rows, and groups an env fault hit (counted, re-queued) - get
  the same reward for every sample, so their GRPO advantages, hence gradients, are zero.

One process only (TRL's reward functions see the per-process slice of a batch; with several
processes the groups would be split between feeds). Resets are made by TRL one after another;
what takes time in a restore runs ahead, in the prefetch threads.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import trl

from adaroll.integrations.feed import Bound, ScheduleFeed
from adaroll.integrations.rows import IDLE, RowSession
from adaroll.integrations.versions import TRL_RANGE, check_version
from adaroll.rollout.jobs import Cost, Group
from adaroll.rollout.sessions import StartError, Starts
from adaroll.routes import StartKind
from adaroll.training.bill import bill_groups
from adaroll.training.ledger import Ledger
from adaroll.training.scheduler import Scheduler

check_version("trl", trl.__version__, TRL_RANGE)

SLOT = "adaroll_slot"
"""The row column that carries a slot number (rows from :meth:`AdaRollTRL.dataset`)."""
NOT_TRAINED = 0.0
"""The reward every sample of a group that must not train gets (any constant would do)."""


class AdaRollEnv:
    """One TRL rollout's environment (TRL makes one per sample and reuses it across batches).

    Public methods other than ``reset`` are the model's tools: only :meth:`act`."""

    def __init__(self, hub: AdaRollTRL) -> None:
        self._hub = hub
        self._session: RowSession | None = None
        self._bound: Bound | None = None

    def reset(self, **row: Any) -> str:
        """Open the row's start; the state as text (appended to the prompt by TRL)."""
        if self._session is not None:
            self._session.close()
        self._session, self._bound = self._hub._open(row)
        if self._session.fault is not None:
            return "\nThe environment could not be started; answer done()."
        return "\n" + self._session.prompt()

    def act(self, action: str) -> str:
        """Perform one action on the phone screen.

        Args:
            action: One action in the text format of the system prompt, e.g. tap(0.5, 0.25),
                swipe(up), type("hello"), key(back), open_app("Contacts") or done().

        Returns:
            The screen after the action, or why nothing happened.
        """
        if self._session is None:
            return "No episode is running."
        return self._session.act(action)


class AdaRollTRL:
    """The scheduler, starts and ledger behind a ``GRPOTrainer`` (see the module docstring)."""

    def __init__(
        self,
        scheduler: Scheduler | None,
        starts: Starts,
        ledger: Ledger,
        *,
        num_generations: int,
        stage: str = "hybrid",
        barrier: bool = True,
    ) -> None:
        self.starts, self.ledger, self.num_generations = starts, ledger, num_generations
        self.feed = (
            ScheduleFeed(
                scheduler, ledger, starts, group_size=num_generations, stage=stage, barrier=barrier
            )
            if scheduler is not None
            else None
        )
        self.stage = stage
        self.sessions_opened: dict[str, int] = {**{k.value: 0 for k in StartKind}, IDLE: 0}
        """Sessions opened so far, by start kind (and idle rows)."""
        self.env_steps = 0
        """Env steps taken by every session so far (the ledger bills each of them)."""
        self._batch_started: float | None = None
        """When the generation batch being scored opened its first session (wall clock)."""

    # -- what GRPOTrainer takes ------------------------------------------------------------------
    def dataset(self, prompt: str = "") -> Any:
        """An endless ``IterableDataset`` of slot rows (set ``max_steps`` and
        ``shuffle_dataset=False``: a shuffle buffer would read a thousand rows ahead and
        reorder them)."""
        from datasets import IterableDataset

        system = RowSession.system_prompt() + ("\n\n" + prompt if prompt else "")

        def rows() -> Iterator[dict[str, Any]]:
            for slot in itertools.count():
                yield {
                    "prompt": [
                        {"role": "system", "content": system},
                        {"role": "user", "content": "Do the task below."},
                    ],
                    SLOT: slot,
                }

        return IterableDataset.from_generator(rows)

    @property
    def environment_factory(self) -> Callable[[], AdaRollEnv]:
        return lambda: AdaRollEnv(self)

    def check_args(self, args: Any) -> None:
        """Refuse ``GRPOConfig`` settings that break the row protocol, naming them."""
        if args.num_generations != self.num_generations:
            raise ValueError(
                f"GRPOConfig.num_generations={args.num_generations}, but the AdaRoll groups "
                f"have {self.num_generations} samples"
            )
        if getattr(args, "shuffle_dataset", False):
            raise ValueError(
                "GRPOConfig.shuffle_dataset must be False with AdaRoll rows (the scheduler orders them)"
            )

    # -- sessions -------------------------------------------------------------------------------------
    def _open(self, row: dict[str, Any]) -> tuple[RowSession, Bound | None]:
        bound: Bound | None
        if SLOT in row and row[SLOT] is not None:
            if self.feed is None:
                raise StartError("slot rows need a scheduler (AdaRollTRL(scheduler=...))")
            slot = self.feed.bind(int(row[SLOT]))
            bound, job = slot, slot.job
        else:
            missing = [k for k in ("kind", "task_id") if not row.get(k)]
            if missing:
                raise StartError(
                    f"row {sorted(row)} has neither {SLOT!r} nor a start ({', '.join(missing)} missing); "
                    f"a start row has kind ({'/'.join(StartKind)}), task_id and checkpoint_id"
                )
            bound = None
            job = self.starts.job(
                str(row["kind"]),
                str(row["task_id"]),
                row.get("checkpoint_id") or None,
                group_size=self.num_generations,
            )
        if self._batch_started is None:
            self._batch_started = time.perf_counter()
        session = (
            RowSession(job, self.starts.open(job), self.starts.history_window)
            if job is not None
            else RowSession.idle()
        )
        self.sessions_opened[session.name] += 1
        return session, bound

    def reward(
        self, completions: Sequence[Any], environments: Sequence[AdaRollEnv], **_: Any
    ) -> list[float | None]:
        # (TRL's reward type allows None: "not applicable"; AdaRoll always has a reward)
        """AdaRoll's rewards for a generation batch; reports each group (module docstring)."""
        sessions: list[RowSession] = []
        bounds: list[Bound | None] = []
        for completion, env in zip(completions, environments, strict=True):
            session = env._session
            if session is None:
                raise RuntimeError("a TRL rollout was scored before its environment was reset")
            if session.steps_left > 0:
                text = _final_text(completion)
                if text:
                    session.act(text)  # a text answer instead of a tool call is the last action
            sessions.append(session)
            bounds.append(env._bound)
        rewards = [s.reward() for s in sessions]
        given: list[float | None] = list(rewards)
        # wall seconds: from the batch's first reset to its scoring (generation, tool calls,
        # env steps), shared equally by its groups
        started, self._batch_started = self._batch_started, None
        groups = max(1, -(-len(sessions) // self.num_generations))
        wall = (time.perf_counter() - started) / groups if started is not None else 0.0
        for lo in range(0, len(sessions), self.num_generations):
            hi = lo + self.num_generations
            group, bound = sessions[lo:hi], bounds[lo]
            faulted = any(s.fault is not None for s in group)
            cost = sum((s.cost for s in group), Cost())  # an idle sample costs its generation
            self.env_steps += cost.env_steps
            # one failed attempt, as AdaRoll counts it; the batch's wall seconds, shared out
            cost = replace(cost, faults=int(faulted), wall_seconds=wall)
            trains = not faulted and max(rewards[lo:hi]) != min(rewards[lo:hi])
            if bound is not None:
                assert self.feed is not None
                trains = trains and self.feed.trains(rewards[lo:hi], bound)
                self.feed.report(
                    bound.slot, rewards[lo:hi], cost, [s.decisions for s in group], faulted=faulted
                )
            else:  # a row that named its start: billed now, as a train group of no iteration
                job = group[0].job
                assert job is not None
                bill_groups(
                    self.ledger,
                    [Group(job, [], rewards[lo:hi], cost)],
                    self.starts.builds,
                    training_samples=[sum(s.decisions for s in group) if trains else 0],
                    stage=self.stage,
                )
            if not trains:
                given[lo:hi] = [NOT_TRAINED] * len(group)
            for s in group:
                s.close()
        return given

    def close(self) -> None:
        self.starts.close()


def _final_text(completion: Any) -> str:
    """The text of a completion's last assistant message without a tool call ("" if none)."""
    if isinstance(completion, str):
        return completion.strip()
    for message in reversed(list(completion)):
        if message.get("role") != "assistant":
            continue
        if message.get("tool_calls"):
            return ""
        content = message.get("content") or ""
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        return str(content).strip()
    return ""
