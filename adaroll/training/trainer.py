"""The RL training loop: schedule -> collect -> update -> observe -> ledger -> evaluate -> save.

One :class:`Trainer` runs one phase (Stage I, hybrid or vanilla) in its own directory::

    PHASE/ledger.jsonl     append-only cost records
    PHASE/metrics.jsonl    one line per iteration and per evaluation
    PHASE/state/           policy, optimiser, scheduler and counters after the last iteration
    PHASE/best/            Stage I: the policy with the best Avg@k on `eval.select_on` so far
    PHASE/done.json        written last: the phase's final numbers and the limit that ended it

Randomness is derived from (seed, phase, iteration), and the ledger and metrics files are cut
back to the counts saved with the state, so ``resume=True`` after a kill reproduces the run an
uninterrupted process would have produced.
"""

from __future__ import annotations

import copy
import io
import json
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

from adaroll.config import TrainConfig
from adaroll.envs.base import GUIEnv, TaskSpec
from adaroll.evaluation import evaluate_split
from adaroll.gc_tuning import training_gc
from adaroll.io import atomic_write_bytes, atomic_write_text, critical, make_private_dir
from adaroll.jsonl import JsonlLog
from adaroll.policies.base import Policy
from adaroll.rollout.collector import RolloutCollector
from adaroll.rollout.jobs import PROBES, Group
from adaroll.rollout.planning import merge_groups
from adaroll.routes import StartKind
from adaroll.seeding import derive_seed, seed_everything
from adaroll.training.bill import bill_groups
from adaroll.training.ledger import Ledger
from adaroll.training.purposes import EPISODE_STATS
from adaroll.training.scheduler import Scheduler
from adaroll.training.self_pool import SelfPivotPool
from adaroll.training.update import grpo_update


@dataclass(frozen=True)
class PhaseResult:
    policy_dir: Path
    final: dict[str, Any]


class Trainer:
    def __init__(
        self,
        name: str,
        directory: Path,
        cfg: TrainConfig,
        policy: Policy,
        scheduler: Scheduler,
        collector: RolloutCollector,
        make_env: Callable[[], GUIEnv],
        eval_tasks: Mapping[str, Sequence[TaskSpec]],
        *,
        seed: int,
        history_window: int | None = None,
        progress: bool = True,
        self_pool: SelfPivotPool | None = None,
    ) -> None:
        self.name, self.dir, self.cfg = name, Path(directory), cfg
        self.self_pool = self_pool
        self.policy, self.scheduler, self.collector = policy, scheduler, collector
        self.make_env, self.eval_tasks = make_env, eval_tasks
        missing = sorted({*cfg.eval.splits, *cfg.eval.final_splits} - set(eval_tasks))
        if missing:
            raise ValueError(
                f"phase {name}: no tasks given for the evaluated split(s) {', '.join(missing)}"
            )
        self.seed, self.history_window, self.progress = seed, history_window, progress
        make_private_dir(self.dir)  # `adaroll train ... --out NEW` starts a run directory
        self.optimizer = torch.optim.Adam(list(policy.parameters()), lr=cfg.grpo.lr)
        # The KL penalty's reference: the phase's start policy, frozen (the trainer is built
        # with the start policy; a resumed phase loads its own weights into `policy` later).
        self.reference = copy.deepcopy(policy) if cfg.grpo.kl_coef > 0 else None
        self.train_purposes = ("train", *PROBES) if cfg.scheduler.train_probes else ("train",)
        self.optimizer_steps = 0
        self.ledger = Ledger(self.dir / "ledger.jsonl")
        self.metrics = JsonlLog(self.dir / "metrics.jsonl")
        self._tb: Any = None
        self.iteration = 0
        self.best: dict[str, Any] = {"score": -1.0, "split": cfg.eval.select_on, "iteration": 0}
        self.phase_times: dict[str, float] = {}

    # -- the algorithm ----------------------------------------------------------------------
    def train(self, *, resume: bool = False) -> PhaseResult:
        done = self.dir / "done.json"
        if resume and done.exists():
            return PhaseResult(self._output_dir(), json.loads(done.read_text()))
        with training_gc():  # fewer full collections of the run's large, long-lived heap
            return self._train(resume=resume)

    def _train(self, *, resume: bool) -> PhaseResult:
        if resume and self._recover_state():
            self._load_state()
        else:
            self._reset_files()
            self._evaluate(self.cfg.eval.splits)  # the starting point of every learning curve
            self._save_state()
        bar = self._progress_bar()
        while not self._budget_spent():
            self.iteration += 1
            before = self._totals()
            seed = seed_everything(self.seed, self.name, self.iteration, policy=self.policy)
            with self._timed("schedule"):
                jobs = self.scheduler.plan(self.iteration)
            with self._timed("collect"):
                groups = self._expanded(self.collector.collect(jobs, seed=seed), seed)
            with self._timed("update"):
                update = grpo_update(
                    self.policy,
                    self.optimizer,
                    groups,
                    self.cfg.grpo,
                    reference=self.reference,
                    train_purposes=self.train_purposes,
                )
            self.optimizer_steps += update.optimizer_steps
            self._grow_self_pool(groups)  # first: a task's new pivots are there when it is routed
            self.scheduler.observe(groups, self.iteration)
            self._record_costs(groups, update.training_samples)
            self._log(
                {
                    "kind": "iteration",
                    "iteration": self.iteration,
                    "loss": update.loss,
                    "groups_used": update.groups_used,
                    "groups_skipped": update.groups_skipped,
                    "optimizer_steps": self.optimizer_steps,
                    **update.stats,
                    **self._totals(),
                    "episodes": self._episode_stats(groups, update.training_samples),
                    "routes": self.scheduler.route_counts(),
                }
            )
            if self._budget_spent():
                self._evaluate(self.cfg.eval.final_splits)
            elif self._at_mark(before, self._totals()):
                self._evaluate(self.cfg.eval.splits)
            self._save_state()
            bar.update(self.iteration, self._totals())
        bar.close()
        if self._tb is not None:
            self._tb.close()
        return self._finish()

    # -- pieces ---------------------------------------------------------------------------------
    def _expanded(self, groups: list[Group], seed: int) -> list[Group]:
        """The groups with the rollouts the scheduler adds to some of them after seeing them
        (:meth:`Scheduler.expand`: Root probe-then-expand), collected from a seed of their own
        and merged in, so that their cost is on the merged group's bill."""
        extra = self.scheduler.expand(groups)
        if not extra:
            return groups
        order = sorted(extra)
        more = self.collector.collect([extra[g] for g in order], seed=derive_seed(seed, "expand"))
        out = list(groups)
        for g, added in zip(order, more, strict=True):
            whole = replace(groups[g].job, group_size=len(groups[g].rewards) + len(added.rewards))
            out[g] = merge_groups(whole, [groups[g], added])
        return out

    def _evaluate(self, splits: Sequence[str]) -> dict[str, Any]:
        row: dict[str, Any] = {
            "kind": "eval",
            "iteration": self.iteration,
            **self._totals(),
            "routes": self.scheduler.route_counts(),
        }
        with self._timed("evaluate"):
            for split in splits:
                tasks = self.eval_tasks[split]
                result = evaluate_split(
                    self.policy,
                    self.make_env,
                    tasks,
                    k=self.cfg.eval.k,
                    history_window=self.history_window,
                    seed=derive_seed(self.seed, "eval", self.iteration, split),
                )
                row[f"{split}_avg"], row[f"{split}_pass"] = result.avg, result.pass_
                self.ledger.add(
                    "eval",
                    self._eval_purpose(split),
                    policy_samples=result.policy_samples,
                    env_steps=result.env_steps,
                    stage=self.name,
                    iteration=self.iteration,
                )
        row.update(self._totals())  # a selection evaluation is part of its own point's cost
        self._log(row)
        if self.cfg.eval.keep_policies:
            self.policy.save(self.dir / "marks" / f"{self.iteration:06d}")
        score = row.get(f"{self.cfg.eval.select_on}_avg", -1.0)
        if self.cfg.keep == "best" and score > self.best["score"]:
            self.best = {
                "score": score,
                "split": self.cfg.eval.select_on,
                "iteration": self.iteration,
            }
            self.policy.save(self.dir / "best")
        return row

    def _eval_purpose(self, split: str) -> str:
        """A phase that keeps its best policy (Stage I) chooses it on ``select_on``: those
        evaluations select (a cost of the configuration); every other evaluation only reports."""
        selects = self.cfg.keep == "best" and split == self.cfg.eval.select_on
        return "selection" if selects else "eval"

    def _at_mark(self, before: dict[str, Any], after: dict[str, Any]) -> bool:
        """Whether this iteration is due an evaluation: every ``eval.every`` iterations, and the
        first iteration past each multiple of ``every_env_steps`` / ``every_policy_samples``."""
        e = self.cfg.eval
        if e.every is not None and self.iteration % e.every == 0:
            return True
        marks = (("phase_env_steps", e.every_env_steps), ("policy_samples", e.every_policy_samples))
        return any(
            every is not None and after[key] // every > before[key] // every for key, every in marks
        )

    def _episode_stats(
        self, groups: Sequence[Group], used: Mapping[int, int]
    ) -> dict[str, dict[str, int]]:
        """What the cost model (:mod:`adaroll.algos.cost_model`) and the purpose table
        (:func:`adaroll.training.purposes.purpose_table`) read of an iteration, per
        ``mode/purpose`` of its groups: groups, samples, successes, the env steps of the groups,
        the decisions of successful and of failed samples (an episode's length in decisions:
        one per env step, plus a last unparseable or rejected sample if it ended that way), the
        summed prefix length of the checkpoints the samples started from, the groups the update
        skipped for equal rewards and the decisions that carried a gradient (``used``: the
        update's decisions per group index)."""
        out: dict[str, dict[str, int]] = {}
        for g, group in enumerate(groups):
            key = f"{group.job.ledger_mode}/{group.job.purpose}"
            row = out.setdefault(key, dict.fromkeys(EPISODE_STATS, 0))
            checkpoint = group.job.checkpoint_id
            depth = self.collector.prefix_length(checkpoint) if checkpoint is not None else 0
            row["groups"] += 1
            row["env_steps"] += group.cost.env_steps
            row["groups_skipped"] += int(g in used and used[g] == 0)
            row["gradient_decisions"] += used.get(g, 0)
            for decisions, reward in zip(group.decisions, group.rewards, strict=True):
                row["samples"] += 1
                row["start_depth"] += depth
                if reward > 0:
                    row["successes"] += 1
                    row["success_decisions"] += len(decisions)
                else:
                    row["failure_decisions"] += len(decisions)
        return out

    def _grow_self_pool(self, groups: Sequence[Group]) -> None:
        """``pivots.self_pool``: successful rollouts of tasks without pivots give them some."""
        if self.self_pool is None:
            return
        with self._timed("self_pool"):
            seed = derive_seed(self.seed, self.name, "self-pool", self.iteration)
            grown = self.self_pool.grow(groups, self.policy, self.collector, seed=seed)
        if grown is None:
            return
        for task_id, pivots in grown.pivots.items():
            weights = grown.weights.get(task_id, {})
            self.scheduler.add_pivots(task_id, pivots, weights, self.iteration)
        self.ledger.add(
            StartKind.ONESTEP.value,
            "routing",
            policy_samples=grown.policy_samples,
            stage=self.name,
            iteration=self.iteration,
        )

    def _record_costs(self, groups: Sequence[Group], used: dict[int, int]) -> None:
        bill_groups(
            self.ledger,
            groups,
            self.collector.builds,
            training_samples=[used.get(g, 0) for g in range(len(groups))],
            stage=self.name,
            iteration=self.iteration,
        )

    def _totals(self) -> dict[str, Any]:
        """The phase's own cost so far. ``phase_env_steps`` (the budget's unit) is every env step
        the phase executed outside reporting evaluations: rollouts and probes (``env_steps``),
        replays (``replay_steps``) and selection evaluations (``selection_env_steps``);
        ``policy_samples`` counts the samples of all of them."""
        cost, selection = self.ledger.training_cost(), self.ledger.selection_cost()
        return {
            "env_steps": cost.env_steps,
            "replay_steps": cost.replayed_steps,
            "selection_env_steps": selection.env_steps,
            "phase_env_steps": cost.env_steps + cost.replayed_steps + selection.env_steps,
            "train_samples": cost.training_samples,
            "policy_samples": cost.policy_samples + selection.policy_samples,
        }

    def _faults(self) -> dict[str, Any]:
        """The phase's environment faults and snapshot fallbacks, from the ledger (so a resumed
        phase reports those of its earlier processes too), in total and by mode/purpose."""
        by = {
            f"{mode}/{purpose}": {"faults": t.faults, "restore_fallbacks": t.restore_fallbacks}
            for (mode, purpose), t in self.ledger.totals_by("mode", "purpose").items()
            if t.faults or t.restore_fallbacks
        }
        total = self.ledger.totals()
        return {"faults": total.faults, "restore_fallbacks": total.restore_fallbacks, "by": by}

    def _budget_spent(self) -> str | None:
        """The limit that ends the phase (iterations, env_steps or policy_samples), or None."""
        b, totals = self.cfg.budget, self._totals()
        if b.iterations is not None and self.iteration >= b.iterations:
            return "iterations"
        if self.optimizer_steps < b.min_optimizer_steps:
            return None  # not before the phase has updated (the quick run: every method does)
        if b.env_steps is not None and totals["phase_env_steps"] >= b.env_steps:
            return "env_steps"
        if b.policy_samples is not None and totals["policy_samples"] >= b.policy_samples:
            return "policy_samples"
        return None

    def _output_dir(self) -> Path:
        return self.dir / ("best" if self.cfg.keep == "best" else "state")

    def _finish(self) -> PhaseResult:
        final = {
            "phase": self.name,
            "iteration": self.iteration,
            **self._totals(),
            "optimizer_steps": self.optimizer_steps,
            "stopped_by": self._budget_spent(),
            "best": self.best,
            "phase_seconds": self.phase_times,
            "faults": self._faults(),
            "last_eval": self.metrics.last(kind="eval"),
        }
        atomic_write_text(self.dir / "done.json", json.dumps(final, indent=2))
        return PhaseResult(self._output_dir(), final)

    def _log(self, row: dict[str, Any]) -> None:
        """One metrics line, mirrored to TensorBoard (scalars keyed by kind, x = env steps)."""
        self.metrics.append(row)
        if self._tb is None:
            from torch.utils.tensorboard import SummaryWriter

            self._tb = SummaryWriter(log_dir=str(self.dir / "tensorboard"))
        for key, value in row.items():
            if isinstance(value, (int, float)) and key not in ("iteration", "phase_env_steps"):
                self._tb.add_scalar(
                    f"{row['kind']}/{key}", value, global_step=row["phase_env_steps"]
                )
        self._tb.flush()

    # -- crash-safe state -------------------------------------------------------------------------
    def _reset_files(self) -> None:
        for name in ("state", "state-old", "best", "done.json"):
            path = self.dir / name
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
        self.ledger.truncate_to(0)
        self.metrics.truncate_to(0)

    def _save_state(self) -> None:
        with critical():  # a Ctrl-C waits until the new state is in (no state-tmp left)
            self._write_state()

    def _write_state(self) -> None:
        tmp, state, old = self.dir / "state-tmp", self.dir / "state", self.dir / "state-old"
        if tmp.exists():
            shutil.rmtree(tmp)
        self.policy.save(tmp)
        buffer = _torch_bytes(self.optimizer.state_dict())
        atomic_write_bytes(tmp / "optimizer.pt", buffer)
        meta = {
            "iteration": self.iteration,
            "ledger_records": len(self.ledger),
            "metrics_records": len(self.metrics),
            "best": self.best,
            "scheduler": self.scheduler.state_dict(),
            "phase_times": self.phase_times,
            "built": self.collector.builds.state_dict(),
            "optimizer_steps": self.optimizer_steps,
        }
        if self.self_pool is not None:
            meta["self_pool"] = self.self_pool.state_dict()
        atomic_write_text(tmp / "meta.json", json.dumps(meta))
        if old.exists():  # left by a process killed after its last rename: `state` is newer
            shutil.rmtree(old)
        if state.exists():
            state.rename(old)
        tmp.rename(state)
        if old.exists():
            shutil.rmtree(old)

    def _recover_state(self) -> bool:
        """Repair what a kill inside :meth:`_save_state` left; whether a saved state exists.

        ``state-tmp`` is never trusted; ``state-old`` is the consistent state when the kill fell
        between the two renames (no ``state``), and a leftover once ``state`` is in place."""
        tmp, state, old = self.dir / "state-tmp", self.dir / "state", self.dir / "state-old"
        if tmp.exists():
            shutil.rmtree(tmp)
        if old.exists():
            if state.exists():
                shutil.rmtree(old)
            else:
                old.rename(state)
        return state.exists()

    def _load_state(self) -> None:
        state = self.dir / "state"
        meta = json.loads((state / "meta.json").read_text())
        self.policy.load_state_dict(type(self.policy).load(state).state_dict())
        self.optimizer.load_state_dict(torch.load(state / "optimizer.pt", weights_only=False))
        self.scheduler.load_state_dict(meta["scheduler"])
        if self.self_pool is not None and "self_pool" in meta:
            self.self_pool.load_state_dict(meta["self_pool"])
        self.iteration, self.best = int(meta["iteration"]), meta["best"]
        self.phase_times = meta.get("phase_times", {})
        self.collector.builds.load_state_dict(meta["built"])
        self.optimizer_steps = int(
            meta.get("optimizer_steps", 0)
        )  # absent: saved before it was kept
        self.ledger.truncate_to(int(meta["ledger_records"]))
        self.metrics.truncate_to(int(meta["metrics_records"]))

    # -- presentation -------------------------------------------------------------------------------
    @contextmanager
    def _timed(self, phase: str):  # type: ignore[no-untyped-def]
        began = time.perf_counter()
        try:
            yield
        finally:
            self.phase_times[phase] = self.phase_times.get(phase, 0.0) + time.perf_counter() - began

    def _progress_bar(self) -> _Bar:
        return _Bar(self.name, self.cfg.budget, self.iteration, enabled=self.progress)


def _torch_bytes(obj: Any) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


class _Bar:
    """A progress bar over the phase's iterations (its total when the budget caps them), with
    the env steps and policy samples spent so far."""

    def __init__(self, name: str, budget: Any, start: int, *, enabled: bool) -> None:
        from adaroll.progress_bar import progress_bar

        self.total = budget.iterations
        self.bar = progress_bar(
            total=self.total,
            initial=start,
            desc=name,
            disable=not enabled,
            unit="it",
            leave=False,
            dynamic_ncols=True,
        )

    def update(self, iteration: int, totals: dict[str, Any]) -> None:
        self.bar.n = iteration
        self.bar.set_postfix(
            steps=totals["phase_env_steps"], samples=totals["policy_samples"], refresh=False
        )
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()
