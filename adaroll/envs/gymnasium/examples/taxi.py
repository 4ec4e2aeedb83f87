"""Gymnasium's Taxi in AdaRoll: the second worked example of docs/envs.md (shown there whole).

Taxi's reward is not a success signal: -1 per step, -10 for a wrong pick-up or drop-off, +20
for the delivery that ends the episode. The adapter says what success is (``success``), reads
the walls, the passenger and the destination into the element list, and plans with the env's
own transition table (``P``) for its expert. Run it with::

    adaroll envs check --set env.name=gymnasium --set 'env.options={id: Taxi-v4, adapter: taxi}'
"""

from __future__ import annotations

from collections import deque
from typing import Any

from adaroll.actions import Action, ActionKind
from adaroll.envs.base import InvalidActionError, Observation, TaskSpec, UIElement
from adaroll.envs.gymnasium.adapter import ADAPTERS, GymAdapter

KEYS = {"down": 0, "up": 1, "right": 2, "left": 3, "enter": 4, "space": 5}
"""AdaRoll key -> Taxi action: move south/north/east/west, pick up (enter), drop off (space)."""
NAMES = ("R", "G", "Y", "B")  # Taxi's four stands, in the order of ``env.unwrapped.locs``
TEMPLATES = {  # template -> (gymnasium.make keywords, step limit)
    "taxi": ({}, 30),
    "taxi-fickle": ({"fickle_passenger": True}, 30),  # may change destination after pick-up
    "taxi-rainy": ({"is_rainy": True}, 45),  # a move goes sideways one time in five
}


@ADAPTERS.register("taxi")
class TaxiAdapter(GymAdapter):
    """One 5x5 town, a start state per task seed; held out: the rainy town."""

    def __init__(self, heldout: tuple[str, ...] = ("taxi-rainy",)) -> None:
        self.heldout = tuple(heldout)

    def templates(self) -> list[str]:
        return list(TEMPLATES)

    def heldout_templates(self) -> list[str]:  # must be templates too
        return list(self.heldout)

    def make_kwargs(self, task: TaskSpec) -> dict[str, Any]:
        return dict(TEMPLATES[task.template][0])  # reset(seed=task.seed) places the rest

    def step_limit(self, task: TaskSpec) -> int:
        return TEMPLATES[task.template][1]

    def instruction(self, env: Any, task: TaskSpec) -> str:
        _, _, passenger, destination = env.unwrapped.decode(env.unwrapped.s)
        return (
            f"Drive the taxi to the passenger at {NAMES[passenger]}, pick them up with "
            f"key(enter), drive them to {NAMES[destination]} and drop them off with key(space)."
        )

    def success(self, env: Any, reward: float, terminated: bool, info: dict[str, Any]) -> bool:
        return terminated  # only a delivery ends a Taxi episode (the time limit truncates)

    def observation(self, env: Any, raw: Any) -> Observation:
        taxi = env.unwrapped  # the state itself, not `raw`: restores are checked by its hash
        row, col, passenger, destination = taxi.decode(taxi.s)

        def cell(r: int, c: int) -> tuple[float, float, float, float]:
            return (c / 5, r / 5, (c + 1) / 5, (r + 1) / 5)

        stands = {loc: NAMES[i] for i, loc in enumerate(taxi.locs)}
        elements = [
            UIElement(
                r * 5 + c,
                "cell",
                stands.get((r, c), ""),
                cell(r, c),
                frozenset({"selected"}) if (r, c) == (row, col) else frozenset(),
            )
            for r in range(5)
            for c in range(5)
        ]
        waiting = passenger < 4
        elements.append(
            UIElement(
                25,
                "passenger",
                f"waiting at {NAMES[passenger]}" if waiting else "in the taxi",
                cell(*taxi.locs[passenger]) if waiting else cell(row, col),
                frozenset(),
            )
        )
        elements.append(
            UIElement(
                26, "destination", NAMES[destination], cell(*taxi.locs[destination]), frozenset()
            )
        )
        walls = [(r, c) for r in range(5) for c in range(4) if taxi.desc[r + 1, 2 * c + 2] == b"|"]
        for i, (r, c) in enumerate(walls):  # a wall between (r, c) and (r, c + 1)
            x = (c + 1) / 5
            elements.append(UIElement(27 + i, "wall", "", (x, r / 5, x, (r + 1) / 5), frozenset()))
        return Observation(tuple(elements), (320, 320))

    def action(self, env: Any, action: Action) -> int:
        if action.kind is ActionKind.KEY and action.key in KEYS:
            return KEYS[action.key]
        raise InvalidActionError(
            f"Taxi takes key(up|down|left|right|enter|space), not {action.to_text()}"
        )

    def policy_hints(self) -> dict[str, Any]:
        return {"kinds": ("key",), "keys": tuple(KEYS)}

    def expert_action(self, env: Any, task: TaskSpec) -> Action:
        """Breadth-first search over the env's transition table (each action's likeliest
        outcome) to the delivery; replanned at every step, so rain and a fickle passenger
        only make it longer."""
        table = env.unwrapped.P
        start = int(env.unwrapped.s)
        first: dict[int, str | None] = {start: None}
        queue = deque([start])
        while queue:
            state = queue.popleft()
            for key, a in KEYS.items():
                _, nxt, reward, terminated = max(table[state][a], key=lambda t: t[0])
                if terminated and reward > 0:
                    return Action.press(first[state] or key)
                if nxt not in first:
                    first[nxt] = first[state] or key
                    queue.append(nxt)
        return Action.done()  # no delivery reachable: give up (the episode fails)

    def get_state(self, env: Any) -> Any:  # the memory snapshot backend works with these two
        t = env.unwrapped
        return (
            int(t.s),
            t.lastaction,
            t.fickle_step,
            t.taxi_orientation,
            t.np_random.bit_generator.state,
        )

    def set_state(self, env: Any, state: Any) -> None:
        t = env.unwrapped
        t.s, t.lastaction, t.fickle_step, t.taxi_orientation, t.np_random.bit_generator.state = (
            state
        )
