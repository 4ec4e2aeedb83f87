"""Opening a start for another framework's rollout: a Local (OneStep) decision at a pivot, a
Suffix episode from a restored checkpoint, or a Root episode from a task reset.

* :class:`Start` - what a row of another framework names: start kind, task, checkpoint.
* :class:`Starts` - the runtime behind the rows: env factory, checkpoint store and snapshot
  backend. It builds each checkpoint's snapshot once (replaying the expert prefix, refusing a
  checkpoint recorded on another device profile) and restores branches **ahead of need, in
  background threads** (:class:`~adaroll.rollout.prefetch.BranchPrefetcher`,
  :func:`~adaroll.snapshots.fallback.restore_verified`): :meth:`Starts.prefetch` is called as
  soon as a Suffix group is planned, so the G resets that TRL or verl then make one by one take
  branches that are already there.
* :class:`Session` - one sample's rollout: the prompt text of its current state, ``act(text)``
  to play one action (the step budget follows the start kind: one decision and no env step for
  Local, the task's remaining steps otherwise), the reward as AdaRoll defines it (expert match
  through the :class:`~adaroll.actions.ActionMatcher` for Local, task success otherwise) and
  the :class:`~adaroll.rollout.jobs.Cost` it ran up, in the ledger's units.

An unparseable action or one the env rejects ends the episode as a failure, as in AdaRoll's own
collector (:func:`adaroll.rollout.episodes.run_episodes`); an :class:`~adaroll.envs.base.EnvFault`
ends it as *faulted*: the caller must not train on its group (see :mod:`adaroll.integrations.feed`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from adaroll.actions import PAPER_MATCHER, Action, ActionMatcher, ActionParseError, parse_action
from adaroll.checkpoints import Checkpoint, CheckpointStore
from adaroll.envs.base import EnvFault, GUIEnv, InvalidActionError, Observation, TaskSpec, replay
from adaroll.policies.base import Context
from adaroll.policies.prompts import system_prompt, user_prompt
from adaroll.rollout.jobs import Cost, close_quietly
from adaroll.rollout.prefetch import BranchPrefetcher
from adaroll.snapshots.base import SnapshotBackend, SnapshotRef
from adaroll.snapshots.fallback import Restored, restore_verified

StartKind = Literal["onestep", "suffix", "root", "idle"]
START_KINDS = ("onestep", "suffix", "root")
IDLE: Literal["idle"] = "idle"
"""A row that only fills a framework's fixed batch while the scheduler waits for outcomes:
no env, a constant reward (no gradient), its samples billed as ``overhead``."""


class StartError(ValueError):
    """A row that names no valid start (unknown kind, task or checkpoint; a checkpoint of
    another device profile)."""


@dataclass(frozen=True)
class Start:
    """Where one group of samples starts."""

    kind: StartKind
    task_id: str
    checkpoint_id: str | None = None


class Starts:
    """Opens :class:`Session`\\ s on one env kind; thread-safe snapshot building and restores."""

    def __init__(
        self,
        make_env: Callable[[], GUIEnv],
        checkpoints: CheckpointStore,
        snapshots: SnapshotBackend,
        tasks: Sequence[TaskSpec],
        *,
        history_window: int = 4,
        matcher: ActionMatcher = PAPER_MATCHER,
        prefetch_capacity: int = 64,
    ) -> None:
        self.make_env, self.checkpoints, self.snapshots = make_env, checkpoints, snapshots
        self.tasks = {t.id: t for t in tasks}
        for checkpoint in checkpoints:
            self.tasks.setdefault(checkpoint.task.id, checkpoint.task)
        self.history_window, self.matcher = history_window, matcher
        self._refs: dict[str, SnapshotRef] = {}
        self._lock = threading.Lock()
        self._device: str | None | bool = False  # False: not looked up yet
        self.setup_replayed_steps = 0
        """Steps replayed to build snapshot images since the caller last took them (billed as
        ``overhead``, as AdaRoll's trainer does); the caller zeroes it."""
        workers = int(getattr(snapshots, "max_restores", 2))
        self._prefetcher = BranchPrefetcher(self._restore, prefetch_capacity, max(1, workers))

    # -- validation --------------------------------------------------------------------------
    def validate(self, start: Start) -> Checkpoint | None:
        """The start's checkpoint (None for Root); a clear :class:`StartError` otherwise."""
        if start.kind not in (*START_KINDS, IDLE):
            raise StartError(f"start kind {start.kind!r} is not one of {', '.join(START_KINDS)}")
        if start.kind == IDLE:
            return None
        if start.kind == "root":
            if start.task_id not in self.tasks:
                raise StartError(
                    f"row names task {start.task_id!r}, which is not among the "
                    f"{len(self.tasks)} tasks of this run (e.g. {self._examples(self.tasks)})"
                )
            return None
        if not start.checkpoint_id:
            raise StartError(f"a {start.kind} row needs a checkpoint_id (task {start.task_id!r})")
        try:
            checkpoint = self.checkpoints.get(start.checkpoint_id)
        except KeyError:
            known = [c.id for c in self.checkpoints.for_task(start.task_id)] or [
                c.id for c in self.checkpoints
            ]
            raise StartError(
                f"row for task {start.task_id!r} names checkpoint {start.checkpoint_id!r}, "
                f"which is not in the checkpoint store (known: {self._examples(known)})"
            ) from None
        if checkpoint.task.id != start.task_id:
            raise StartError(
                f"checkpoint {checkpoint.id!r} belongs to task {checkpoint.task.id!r}, "
                f"not to the row's task {start.task_id!r}"
            )
        device = self.device()
        if checkpoint.device is not None and device is not None and checkpoint.device != device:
            raise StartError(
                f"checkpoint {checkpoint.id!r} was recorded on device profile "
                f"{checkpoint.device!r}, but this env runs device profile {device!r}: "
                f"collect the experts on {device!r} or train on {checkpoint.device!r}"
            )
        return checkpoint

    @staticmethod
    def _examples(names: Sequence[str] | Mapping[str, object]) -> str:
        names = sorted(names)
        return ", ".join(names[:5]) + (f", ... ({len(names)} in all)" if len(names) > 5 else "")

    def device(self) -> str | None:
        """The device profile the envs run (None for envs without profiles)."""
        if self._device is False:
            env = self.make_env()
            try:
                self._device = env.device_name
            finally:
                close_quietly(env)
        return self._device  # type: ignore[return-value]

    # -- restores ------------------------------------------------------------------------------
    def prefetch(self, checkpoint_id: str, branches: int) -> None:
        """Restore ``branches`` branches of the checkpoint in background threads, now."""
        self._prefetcher.plan([checkpoint_id] * branches)

    def _snapshot(self, checkpoint: Checkpoint) -> SnapshotRef:
        with self._lock:
            ref = self._refs.get(checkpoint.id)
            if ref is not None:
                return ref
            env = self.make_env()
            try:
                obs = replay(env, checkpoint.task, checkpoint.history)
                if obs.element_tree_hash() != checkpoint.observation.element_tree_hash():
                    raise StartError(
                        f"replaying checkpoint {checkpoint.id!r} did not reach its recorded state"
                    )
                ref = self.snapshots.save(env, checkpoint.history)
            finally:
                close_quietly(env)
            self.setup_replayed_steps += len(checkpoint.history)
            self._refs[checkpoint.id] = ref
            return ref

    def _restore(self, checkpoint_id: str) -> Restored:
        ref = self._snapshot(self.checkpoints.get(checkpoint_id))
        return restore_verified(self.snapshots, ref, self.make_env)

    # -- sessions --------------------------------------------------------------------------------
    def open(self, start: Start, *, tag: object = None) -> Session:
        """A session at ``start`` (validated; Suffix takes a prefetched branch when there is
        one). An :class:`EnvFault` while opening gives a faulted session, not an exception."""
        checkpoint = self.validate(start)
        session = Session(self, start, tag)
        try:
            if start.kind == IDLE:
                return session
            if start.kind == "onestep":
                assert checkpoint is not None
                session._begin(
                    None,
                    checkpoint.instruction,
                    checkpoint.history,
                    checkpoint.observation,
                    checkpoint.expert_action,
                )
            elif start.kind == "suffix":
                assert checkpoint is not None
                began = time.perf_counter()
                restored = self._prefetcher.take(checkpoint.id) or self._restore(checkpoint.id)
                replayed = len(checkpoint.history) if self.snapshots.replays_prefix else 0
                if restored.fallback:
                    replayed += restored.replayed_steps
                session.cost = session.cost + Cost(
                    restores=1,
                    restore_seconds=time.perf_counter() - began,
                    replayed_steps=replayed,
                    restore_fallbacks=int(bool(restored.fallback)),
                )
                session._begin(
                    restored.env,
                    checkpoint.instruction,
                    checkpoint.history,
                    restored.env.observe(),
                    None,
                )
            else:
                env = self.make_env()
                session.env = env
                obs, info = env.reset(options={"task": self.tasks[start.task_id]})
                session._begin(env, str(info.get("instruction", env.instruction)), (), obs, None)
        except EnvFault as exc:
            session._fail(exc)
        return session

    def close(self) -> None:
        self._prefetcher.close()
        with self._lock:
            for ref in self._refs.values():
                self.snapshots.release(ref)
            self._refs.clear()


class Session:
    """One sample's rollout from a start (see the module docstring)."""

    def __init__(self, starts: Starts, start: Start, tag: object) -> None:
        self.starts, self.start, self.tag = starts, start, tag
        self.env: GUIEnv | None = None
        self.instruction = ""
        self.history: list[Action] = []
        self.observation = Observation((), (1, 1))
        self.expert_action: Action | None = None
        self.cost = Cost()
        self.decisions = 0
        """Actions the policy produced (parsed or not): the sample's policy samples."""
        self.done = start.kind == IDLE
        self.success = False
        self.onestep_reward = 0.0
        self.fault: EnvFault | None = None

    def _begin(
        self,
        env: GUIEnv | None,
        instruction: str,
        history: Sequence[Action],
        observation: Observation,
        expert: Action | None,
    ) -> None:
        self.env, self.instruction = env, instruction
        self.history, self.observation, self.expert_action = list(history), observation, expert

    def _fail(self, exc: EnvFault) -> None:
        self.fault, self.done = exc, True
        self.cost = self.cost + Cost(faults=1)
        self.close()

    # -- what the model sees -----------------------------------------------------------------------
    def context(self) -> Context:
        window = self.starts.history_window
        history = tuple(self.history[-window:]) if window > 0 else ()
        return Context(self.instruction, self.observation, history)

    def prompt(self) -> str:
        """The state as text: AdaRoll's user prompt (instruction, recent actions, elements)."""
        if self.start.kind == IDLE:
            return "(idle row: no task, answer done())"
        return user_prompt(self.context(), history_len=self.starts.history_window)

    @staticmethod
    def system_prompt() -> str:
        """AdaRoll's system prompt: the agent's role and the action-format help."""
        return system_prompt()

    @property
    def steps_left(self) -> int:
        """Actions this session may still take: one decision for Local, the env's remaining
        steps for Suffix and Root, 0 once done."""
        if self.done:
            return 0
        if self.start.kind == "onestep":
            return 1 - self.decisions
        assert self.env is not None
        return max(0, self.env.max_steps - self.env.steps_taken)

    # -- acting ---------------------------------------------------------------------------------
    def act(self, text: str) -> str:
        """Play one action given as text; the new state as text (or why nothing happened)."""
        if self.done:
            return "The episode is over: no more actions are taken."
        self.decisions += 1
        self.cost = self.cost + Cost(policy_samples=1)
        try:
            action: Action | None = parse_action(text)
        except ActionParseError as exc:
            action, why = None, str(exc)
        if action is None:
            self.cost = self.cost + Cost(invalid_samples=1)
            self.done = True
            return f"Invalid action ({why}); the episode ends as a failure."
        if self.start.kind == "onestep":
            assert self.expert_action is not None
            self.onestep_reward = self.starts.matcher.reward(action, self.expert_action)
            self.done = True
            return "Action recorded (one-step start: nothing is executed)."
        assert self.env is not None
        try:
            obs, _, terminated, truncated, info = self.env.step(action)
        except InvalidActionError as exc:
            self.cost = self.cost + Cost(invalid_samples=1)
            self.done = True
            return f"The screen rejected {action.to_text()}: {exc}; the episode ends as a failure."
        except EnvFault as exc:
            self._fail(exc)
            return f"The environment broke: {exc}"
        self.cost = self.cost + Cost(env_steps=1)
        self.history.append(action)
        self.observation = obs
        if terminated or truncated:
            self.success = bool(info.get("success", False))
            self.done = True
            return f"The episode ended ({'success' if self.success else 'failure'})."
        return self.prompt()

    def reward(self) -> float:
        """AdaRoll's reward: expert match for Local, task success (1/0) otherwise."""
        if self.start.kind == "onestep":
            return self.onestep_reward
        return 1.0 if self.success else 0.0

    def close(self) -> None:
        if self.env is not None:
            close_quietly(self.env)
            self.env = None
