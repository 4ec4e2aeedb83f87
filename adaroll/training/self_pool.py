"""Self-generated pivots: checkpoints from the policy's own verified successes (``pivots.self_pool``).

A task whose expert failed has no checkpoints, so the paper's Stage II can only train it at
the root (the scheduler sends a task without pivots to Root whatever its ``p(x)``). Once the
policy itself solves such a task - a Root or Suffix rollout the task's verifier accepts, the
same bar an expert trajectory must pass - every state on that rollout becomes a checkpoint
``c_t = (task, action prefix, observation, the action the policy took there)``. The new
checkpoints are scored with N policy samples like the expert ones and the usual selection
(gate, fallback, weights) picks the task's pivots, which the scheduler then routes by ``p(x)``.

* **Eligible tasks.** Only tasks without pivots harvest, and only until they have some: the
  option exists for tasks the expert could not serve, and it leaves every other task's pivot
  list (and Suffix frontier index) untouched. Selection among a task's new checkpoints is the
  configured one (gate, weights) with a fallback of at least one, so a harvest always gives
  the task pivots.
* **State identity.** Deduplicating by UI tree hash assumes the observation identifies the
  state (true of the mobile and web envs' element trees). An env with hidden state would merge
  distinct states; the restore check then fails loudly on a merged state that does not replay
  to its recorded tree.
* **Restoring.** A self checkpoint records its full action prefix from the task reset (for a
  Suffix rollout, the start checkpoint's prefix followed by the suffix's actions), so the
  collector builds its snapshot exactly as it does an expert one's: by replaying the prefix
  and checking the UI tree hash, then saving it with the run's snapshot backend.
* **Labels.** A rollout may visit a state more than once (a no-op tap, a "stop" that loops
  back). The checkpoint is taken at the rollout's *last* visit, labelled with the action that
  left the state for good: on a successful rollout that action led on to the success, while
  the first visit's action may be the no-op that looped (a OneStep reward for matching it would
  teach the policy to stall). Its prefix is the rollout's real path up to that visit.
* **Deduplication.** A state is ``(task, observation tree hash)``. A state already in the store
  (expert or self) or met by an earlier successful rollout (groups in order, samples in order)
  is kept once, from the first rollout that met it, so the result is deterministic.
* **Cost.** Scoring draws ``n_samples`` per new checkpoint; the trainer ledgers them as
  ``onestep``/``routing`` policy samples (they cost no env steps and never train).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from adaroll.actions import Action, ActionMatcher
from adaroll.checkpoints import Checkpoint, CheckpointStore
from adaroll.config import PivotConfig
from adaroll.policies.base import Policy
from adaroll.rollout.collector import RolloutCollector
from adaroll.rollout.jobs import Decision, Group
from adaroll.routes import StartKind
from adaroll.training.pivot_scoring import PivotSet, score_checkpoints


@dataclass(frozen=True)
class Growth:
    """What one harvest added: per task its new pivots and draw weights, and the cost."""

    pivots: dict[str, list[str]]
    weights: dict[str, dict[str, float]]
    policy_samples: int


class SelfPivotPool:
    """Adds self-generated checkpoints to ``store`` (the collector's own store, so that they
    are restorable) for the ``eligible`` tasks (those without pivots)."""

    def __init__(
        self,
        store: CheckpointStore,
        eligible: Iterable[str],
        cfg: PivotConfig,
        matcher: ActionMatcher,
    ) -> None:
        # The gate and the fallback as configured, but a task given self checkpoints always keeps
        # at least its best one: getting pivots is what the option is for. A pivot budget
        # (budget_top_k) counts expert pivots; it does not apply here.
        fallback = max(1, cfg.fallback_top_k)
        self.cfg = cfg.model_copy(update={"fallback_top_k": fallback, "budget_top_k": None})
        self.store, self.matcher = store, matcher
        self.eligible = set(eligible)
        self.added: list[Checkpoint] = []
        self._seen = {(c.task.id, c.observation.element_tree_hash()) for c in store}

    def harvest(self, groups: Sequence[Group]) -> list[Checkpoint]:
        """New checkpoints from the successful Root/Suffix samples of eligible tasks (added to
        the store; deduplicated by state)."""
        made: list[Checkpoint] = []
        for group in groups:
            job = group.job
            if job.kind is StartKind.ONESTEP or job.task.id not in self.eligible:
                continue
            start = (
                self.store.get(job.checkpoint_id)
                if job.kind is StartKind.SUFFIX and job.checkpoint_id
                else None
            )
            prefix = start.history if start is not None else ()
            for decisions, reward in zip(group.decisions, group.rewards, strict=True):
                if reward <= 0 or not decisions:
                    continue
                actions = [d.sample.action for d in decisions]
                # A sample that did not parse or that the env refused ends its episode failed.
                assert all(a is not None for a in actions), (
                    "a successful episode has only valid actions"
                )
                path: tuple[Action, ...] = prefix + tuple(a for a in actions if a is not None)
                last_visit = _last_visits(decisions)
                for t, decision in enumerate(decisions):
                    obs = decision.context.observation
                    key = (job.task.id, obs.element_tree_hash())
                    if key in self._seen or last_visit[key[1]] != t:
                        continue
                    self._seen.add(key)
                    step = len(prefix) + t
                    ckpt = Checkpoint(
                        job.task,
                        step,
                        decision.context.instruction,
                        path[:step],
                        obs,
                        path[step],
                        len(path),
                        origin=f"self-{key[1]}",
                    )
                    self.store.add(ckpt)
                    self.added.append(ckpt)
                    made.append(ckpt)
        return made

    def grow(
        self, groups: Sequence[Group], policy: Policy, collector: RolloutCollector, *, seed: int
    ) -> Growth | None:
        """Harvest, score the new checkpoints with ``policy`` and select pivots among each
        task's new checkpoints; a task that got pivots stops harvesting. None: nothing new."""
        made = self.harvest(groups)
        if not made:
            return None
        scored: PivotSet = score_checkpoints(
            policy, collector, CheckpointStore(made), self.cfg, seed=seed, matcher=self.matcher
        )
        pivots = {task: ids for task, ids in scored.pivots.items() if ids}
        self.eligible -= set(pivots)
        return Growth(
            pivots, {t: w for t, w in scored.weights.items() if t in pivots}, scored.policy_samples
        )

    # -- crash-safe state (the trainer saves it with the scheduler's) ------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {"added": [c.to_dict() for c in self.added], "eligible": sorted(self.eligible)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.eligible = set(state["eligible"])
        self.added = [Checkpoint.from_dict(d) for d in state["added"]]
        for ckpt in self.added:
            self._seen.add((ckpt.task.id, ckpt.observation.element_tree_hash()))
            try:
                self.store.get(ckpt.id)
            except KeyError:  # a fresh process: the store holds the expert checkpoints only
                self.store.add(ckpt)


def _last_visits(decisions: Sequence[Decision]) -> dict[str, int]:
    """Per state (tree hash) of one rollout, the step of its last visit: the decision that left
    the state for good, so on a successful rollout the one that led on to the success."""
    return {d.context.observation.element_tree_hash(): t for t, d in enumerate(decisions)}
