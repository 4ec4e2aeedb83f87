"""A policy whose every output is a pure function of (context, sample index), so that AdaRoll's
trainer and a framework integration given "the same policy outputs" see exactly the same
actions, and a driver that makes the calls GRPOTrainer makes (without its model).

Per task a behaviour: ``good`` plays the expert's action (found by the state it was recorded
in), ``late`` plays ``done()`` at the root and the expert's action once it has a history (Root
fails, Suffix from a later pivot succeeds), ``bad`` plays ``done()``. A OneStep group of G
samples alternates the expert's action and ``done()`` (rewards differ: it trains)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from adaroll.actions import parse_action
from adaroll.checkpoints import CheckpointStore
from adaroll.config import BudgetConfig, EvalConfig, GRPOConfig, SchedulerConfig, TrainConfig
from adaroll.policies.base import Context, Policy, SampledAction
from adaroll.training.scheduler import SCHEDULERS
from tests.real_mobile import SUITE


class ScriptedPolicy(Policy):
    def __init__(self, store: CheckpointStore, behaviour: Mapping[str, str]) -> None:
        self.table = {(c.instruction, c.observation.element_tree_hash()): c for c in store}
        self.behaviour = dict(behaviour)
        self.weight = torch.nn.Parameter(torch.zeros(1))

    def text(self, context: Context, k: int, n: int) -> str:
        checkpoint = self.table.get((context.instruction, context.observation.element_tree_hash()))
        if checkpoint is None:
            return "done()"
        expert = checkpoint.expert_action.to_text()
        if n > 1:  # a OneStep group
            return expert if k % 2 == 0 else "done()"
        mode = self.behaviour[checkpoint.task.id]
        if mode == "good" or (mode == "late" and context.history):
            return expert
        return "done()"

    def sample(
        self, contexts: Sequence[Context], n: int, *, greedy: bool = False
    ) -> list[list[SampledAction]]:
        return [
            [SampledAction(parse_action(t), 0.0, t) for t in (self.text(c, k, n) for k in range(n))]
            for c in contexts
        ]

    def decision_log_probs(self, contexts: Sequence[Context], samples: Sequence[SampledAction]):
        logp = self.weight.expand(len(samples), 1) * 0.0 - 1.0 + self.weight.expand(len(samples), 1)
        return logp, torch.ones(len(samples), 1)

    def parameters(self):
        return [self.weight]

    def state_dict(self) -> dict[str, Any]:
        return {"weight": self.weight.detach().clone()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        with torch.no_grad():
            self.weight.copy_(state["weight"])

    def save(self, path: Path) -> None:
        Path(path).mkdir(parents=True, exist_ok=True)
        torch.save(self.state_dict(), Path(path) / "scripted.pt")

    @classmethod
    def load(cls, path: Path) -> Policy:
        raise NotImplementedError("the scripted policy is rebuilt, never loaded")


def drive_like_grpo_trainer(
    hub: Any, policy: ScriptedPolicy, *, rows_per_batch: int, iterations: int
) -> None:
    """Make the calls GRPOTrainer makes - one env per sample, ``reset(**row)`` for each, tool
    calls, the reward function over the batch - with ``policy`` choosing every action, until
    the feed has finished ``iterations`` iterations."""
    dataset = iter(hub.dataset())
    G = hub.num_generations
    pool = [hub.environment_factory() for _ in range(rows_per_batch * G)]
    while hub.feed.finished < iterations:
        rows = [next(dataset) for _ in range(rows_per_batch)]
        envs = pool[: len(rows) * G]
        for r, row in enumerate(rows):
            for k in range(G):
                envs[r * G + k].reset(**row)
        for r in range(len(rows)):
            group = envs[r * G : (r + 1) * G]
            first = group[0]._session
            if not first.session.rolls_out:  # a OneStep group: G samples of one context
                samples = policy.sample([first.context()], G)[0]
                for env, sample in zip(group, samples, strict=True):
                    env.act(sample.raw)
                continue
            for env in group:
                while env._session.steps_left > 0:
                    env.act(policy.sample([env._session.context()], 1)[0][0].raw)
        hub.reward([[{"role": "assistant", "content": ""}]] * len(envs), envs)


# -- the run both sides make (tests/integrations/test_equality.py, test_starts.py) --
G = 4
ITERATIONS = 4


def configs(tau_low: float) -> TrainConfig:
    sched = SchedulerConfig(
        tasks_per_iteration=3,
        tau_low=tau_low,
        tau_high=0.75,
        routing_probes=G,
        root_probes=G,
        local_reeval_every=2,
    )
    return TrainConfig(
        algorithm="hybrid",
        budget=BudgetConfig(iterations=ITERATIONS),
        grpo=GRPOConfig(group_size=G),
        scheduler=sched,
        eval=EvalConfig(k=1, splits=(), final_splits=()),
    )


def scheduler(cfg: TrainConfig, store):
    tasks = SUITE.split("train")
    pivots = {t: [c.id for c in store.for_task(t)] for t in store.task_ids()}
    return SCHEDULERS.get("hybrid")(
        tasks=tasks, sched=cfg.scheduler, grpo=cfg.grpo, pivots=pivots, seed=3
    )


def behaviour(store) -> dict[str, str]:
    ids = sorted(store.task_ids())
    return dict(zip(ids, ("good", "late", "bad"), strict=True))
