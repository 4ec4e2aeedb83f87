"""Gymnasium's FrozenLake in AdaRoll: the worked example of docs/envs.md (shown there whole)."""

from __future__ import annotations

from collections import deque
from typing import Any

from gymnasium.envs.toy_text.frozen_lake import generate_random_map

from adaroll.actions import Action, ActionKind
from adaroll.envs.base import InvalidActionError, Observation, TaskSpec, UIElement
from adaroll.envs.gymnasium.adapter import ADAPTERS, GymAdapter

MOVES = {
    "left": (0, 0, -1),
    "down": (1, 1, 0),
    "right": (2, 0, 1),
    "up": (3, -1, 0),
}  # action, dy, dx
TILES = {b"S": "start", b"F": "ice", b"H": "hole", b"G": "goal"}


@ADAPTERS.register("frozen_lake")
class FrozenLakeAdapter(GymAdapter):
    """Seeded random lakes (template ``lake-NxN``); the agent moves with key(left|down|right|up)."""

    def __init__(
        self,
        sizes: tuple[int, ...] = (4, 5, 6, 7),
        heldout: tuple[int, ...] = (7,),
        slippery: bool = False,
    ) -> None:
        self.sizes, self.heldout, self.slippery = tuple(sizes), tuple(heldout), slippery

    def templates(self) -> list[str]:
        return [f"lake-{n}x{n}" for n in self.sizes]

    def heldout_templates(self) -> list[str]:
        return [f"lake-{n}x{n}" for n in self.heldout]

    def make_kwargs(self, task: TaskSpec) -> dict[str, Any]:  # one lake per task seed
        size = int(task.template.rpartition("x")[2])
        return {"desc": generate_random_map(size, seed=task.seed), "is_slippery": self.slippery}

    def step_limit(self, task: TaskSpec) -> int:
        return int(task.template.rpartition("x")[2]) ** 2

    def instruction(self, env: Any, task: TaskSpec) -> str:
        return "Walk from the start to the goal over the ice without falling into a hole."

    def observation(self, env: Any, raw: Any) -> Observation:  # one element per tile
        lake = env.unwrapped  # read the state itself (not `raw`), so that restores are checked
        rows, cols = lake.desc.shape
        tiles = tuple(
            UIElement(
                r * cols + c,
                "tile",
                TILES[lake.desc[r, c]],
                (c / cols, r / rows, (c + 1) / cols, (r + 1) / rows),
                frozenset({"selected"}) if r * cols + c == lake.s else frozenset(),
            )
            for r in range(rows)
            for c in range(cols)
        )
        return Observation(tiles, (64 * cols, 64 * rows))

    def action(self, env: Any, action: Action) -> int:
        if action.kind is ActionKind.KEY and action.key in MOVES:
            return MOVES[action.key][0]
        raise InvalidActionError(
            f"FrozenLake moves with key(left|down|right|up), not {action.to_text()}"
        )

    def policy_hints(self) -> dict[str, Any]:  # the small policy only needs the four keys
        return {"kinds": ("key",), "keys": tuple(MOVES)}

    def expert_action(self, env: Any, task: TaskSpec) -> Action:  # breadth-first search
        lake = env.unwrapped
        rows, cols = lake.desc.shape
        start = divmod(int(lake.s), cols)
        first_move: dict[tuple[int, int], str | None] = {start: None}
        queue = deque([start])
        while queue:
            r, c = queue.popleft()
            if lake.desc[r, c] == b"G":
                return Action.press(first_move[(r, c)] or "left")
            for key, (_, dr, dc) in MOVES.items():
                nxt = (r + dr, c + dc)
                if (
                    0 <= nxt[0] < rows
                    and 0 <= nxt[1] < cols
                    and lake.desc[nxt] != b"H"
                    and nxt not in first_move
                ):
                    first_move[nxt] = first_move[(r, c)] or key
                    queue.append(nxt)
        return Action.done()  # no path: give up (the episode fails)

    def get_state(self, env: Any) -> Any:  # makes the memory snapshot backend available
        lake = env.unwrapped
        return int(lake.s), lake.lastaction, lake.np_random.bit_generator.state

    def set_state(self, env: Any, state: Any) -> None:
        lake = env.unwrapped
        lake.s, lake.lastaction, lake.np_random.bit_generator.state = state
