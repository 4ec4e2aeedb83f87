"""A first CliffWalking adapter as a newcomer writes it (test only): it keeps the default
``success`` (a positive reward on the terminating step), but CliffWalking pays -1 at the goal,
so no expert run ever verifies; and its one start state does not depend on the task's seed.
Imported by path (``env.options.adapter``) as users do."""

from __future__ import annotations

from collections import deque
from typing import Any

from adaroll.actions import Action, ActionKind
from adaroll.envs.base import InvalidActionError, Observation, TaskSpec, UIElement
from adaroll.envs.gymnasium import GymAdapter

MOVES = {"up": 0, "right": 1, "down": 2, "left": 3}
ROWS, COLS = 4, 12


class NaiveCliffAdapter(GymAdapter):
    """CliffWalking with the default ``success``: every expert run fails."""

    max_steps = 30

    def templates(self) -> list[str]:
        return ["cliff"]

    def instruction(self, env: Any, task: TaskSpec) -> str:
        return "Walk along the cliff from the start to the goal without falling."

    def observation(self, env: Any, raw: Any) -> Observation:
        s = int(env.unwrapped.s)
        cells = tuple(
            UIElement(
                i,
                "cell",
                "cliff" if i // COLS == 3 and 0 < i % COLS < COLS - 1 else "",
                (
                    (i % COLS) / COLS,
                    (i // COLS) / ROWS,
                    (i % COLS + 1) / COLS,
                    (i // COLS + 1) / ROWS,
                ),
                frozenset({"selected"}) if i == s else frozenset(),
            )
            for i in range(ROWS * COLS)
        )
        return Observation(cells, (64 * COLS, 64 * ROWS))

    def action(self, env: Any, action: Action) -> int:
        if action.kind is ActionKind.KEY and action.key in MOVES:
            return MOVES[action.key]
        raise InvalidActionError(
            f"CliffWalking moves with key(up|right|down|left), not {action.to_text()}"
        )

    def policy_hints(self) -> dict[str, Any]:
        return {"kinds": ("key",), "keys": tuple(MOVES)}

    def expert_action(self, env: Any, task: TaskSpec) -> Action:
        table, start = env.unwrapped.P, int(env.unwrapped.s)
        first: dict[int, str | None] = {start: None}
        queue = deque([start])
        while queue:
            state = queue.popleft()
            for key, a in MOVES.items():
                _, nxt, reward, terminated = table[state][a][0]
                if terminated:
                    return Action.press(first[state] or key)
                if reward > -100 and nxt not in first:
                    first[nxt] = first[state] or key
                    queue.append(nxt)
        return Action.done()
