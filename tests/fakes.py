"""Small real implementations of the contracts for unit tests of other components.

``LineEnv``: a corridor of ``length`` screens; each screen shows a "go" and a "stop" button whose
sides depend on the task seed and position; tapping "go" advances, "stop" does nothing.
``GoPolicy``: one trainable logit; taps "go" with probability sigmoid(theta).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from adaroll.actions import Action, ActionKind
from adaroll.envs.base import (
    GUIEnv,
    InvalidActionError,
    Observation,
    TaskSpec,
    TaskSuite,
    UIElement,
)
from adaroll.policies.base import Context, Policy, SampledAction

LEFT = (0.1, 0.4, 0.4, 0.6)
RIGHT = (0.6, 0.4, 0.9, 0.6)


@dataclass(frozen=True)
class LineState:
    task: TaskSpec
    position: int
    steps: int
    done: bool = False


class LineEnv(GUIEnv):
    name = "line"

    def __init__(self, length: int = 3, max_steps: int = 6) -> None:
        self.length, self._max_steps = length, max_steps
        self.state: LineState | None = None
        self.closed = False

    def _go_left(self) -> bool:
        assert self.state is not None
        return random.Random(f"{self.state.task.seed}:{self.state.position}").random() < 0.5

    def observe(self) -> Observation:
        go_left = self._go_left()
        elements = (
            UIElement(0, "button", "go" if go_left else "stop", LEFT, frozenset({"clickable"})),
            UIElement(1, "button", "stop" if go_left else "go", RIGHT, frozenset({"clickable"})),
        )
        return Observation(elements, (100, 100))

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        task = (options or {})["task"]
        self.state = LineState(task, 0, 0)
        return self.observe(), {"instruction": self.instruction}

    def step(self, action: Action):
        assert self.state is not None and not self.state.done
        if action.kind is not ActionKind.TAP:
            raise InvalidActionError(f"LineEnv only takes taps, got {action.kind.value}")
        hit = next(
            (
                e
                for e in self.observe().elements
                if e.bounds[0] <= action.x <= e.bounds[2] and e.bounds[1] <= action.y <= e.bounds[3]
            ),
            None,
        )
        position = self.state.position + (1 if hit is not None and hit.text == "go" else 0)
        steps = self.state.steps + 1
        success = position >= self.length
        terminated, truncated = success, not success and steps >= self._max_steps
        self.state = LineState(self.state.task, position, steps, terminated or truncated)
        info = {"success": success} if terminated or truncated else {}
        return self.observe(), float(success), terminated, truncated, info

    @property
    def task(self) -> TaskSpec:
        assert self.state is not None
        return self.state.task

    @property
    def instruction(self) -> str:
        return "walk to the end"

    @property
    def max_steps(self) -> int:
        return self._max_steps

    @property
    def steps_taken(self) -> int:
        assert self.state is not None
        return self.state.steps

    def get_state(self) -> LineState:
        assert self.state is not None
        return self.state

    def branch(self, state: LineState) -> LineEnv:
        env = LineEnv(self.length, self._max_steps)
        env.state = state
        return env

    def close(self) -> None:
        self.closed = True


class LineSuite(TaskSuite):
    def templates(self) -> list[str]:
        return ["walk"]

    def split(self, name: str) -> list[TaskSpec]:
        offset = {
            "pretrain": 1000,
            "train": 0,
            "val": 300,
            "heldout": 500,
            "heldout-templates": 700,
        }[name]
        return [TaskSpec("line", "walk", offset + i) for i in range(4)]

    def expert_action(self, env: GUIEnv) -> Action:
        go = next(e for e in env.observe().elements if e.text == "go")
        return Action.tap(*go.center)


class GoPolicy(Policy):
    """Taps "go" with probability sigmoid(theta): a one-parameter learner."""

    def __init__(self, theta: float = 0.0) -> None:
        self.theta = torch.nn.Parameter(torch.tensor(float(theta)))

    def _p_go(self) -> torch.Tensor:
        return torch.sigmoid(self.theta)

    def sample(self, contexts: Sequence[Context], n: int, *, greedy: bool = False):
        out = []
        with torch.no_grad():
            p = float(self._p_go())
        for ctx in contexts:
            row = []
            for _ in range(n):
                go = True if greedy else bool(torch.rand(()) < p)
                target = next(e for e in ctx.observation.elements if (e.text == "go") == go)
                row.append(
                    SampledAction(
                        Action.tap(*target.center),
                        float(torch.log(torch.tensor(p if go else 1 - p))),
                    )
                )
            out.append(row)
        return out

    def decision_log_probs(self, contexts: Sequence[Context], samples: Sequence[SampledAction]):
        rows = []
        for ctx, s in zip(contexts, samples, strict=True):
            assert s.action is not None
            hit = next(
                e for e in ctx.observation.elements if e.bounds[0] <= s.action.x <= e.bounds[2]
            )
            p = self._p_go()
            rows.append(torch.log(p) if hit.text == "go" else torch.log(1 - p))
        logp = torch.stack(rows).unsqueeze(-1)
        return logp, torch.ones_like(logp)

    def parameters(self):
        return [self.theta]

    def state_dict(self):
        return {"theta": self.theta.detach().clone()}

    def load_state_dict(self, state):
        with torch.no_grad():
            self.theta.copy_(state["theta"])

    def save(self, path: Path) -> None:
        Path(path).mkdir(parents=True, exist_ok=True)
        torch.save(self.state_dict(), Path(path) / "policy.pt")

    @classmethod
    def load(cls, path: Path) -> GoPolicy:
        policy = cls()
        policy.load_state_dict(torch.load(Path(path) / "policy.pt"))
        return policy


class TapPolicy(Policy):
    """Taps the centre of a uniformly drawn element of any env (torch's global RNG, so the
    collector's reseeding fixes its samples); for rollout tests on real envs. No parameters:
    ``decision_log_probs`` is the constant log(1 / #elements)."""

    def sample(self, contexts: Sequence[Context], n: int, *, greedy: bool = False):
        out = []
        for ctx in contexts:
            elements = ctx.observation.elements
            row = []
            for _ in range(n):
                k = 0 if greedy else int(torch.randint(len(elements), ()))
                row.append(
                    SampledAction(
                        Action.tap(*elements[k].center),
                        -float(torch.log(torch.tensor(len(elements)))),
                    )
                )
            out.append(row)
        return out

    def decision_log_probs(self, contexts: Sequence[Context], samples: Sequence[SampledAction]):
        logp = torch.tensor(
            [[-float(torch.log(torch.tensor(len(c.observation.elements))))] for c in contexts]
        )
        return logp, torch.ones_like(logp)

    def parameters(self):
        return []

    def state_dict(self):
        return {}

    def load_state_dict(self, state):
        pass

    def save(self, path: Path) -> None:
        Path(path).mkdir(parents=True, exist_ok=True)

    @classmethod
    def load(cls, path: Path) -> TapPolicy:
        return cls()
