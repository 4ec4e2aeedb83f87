"""The Policy protocol every policy implements (small torch net, transformers LM, remote API).

Nothing in training depends on a particular policy: the trainer only calls these methods.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from adaroll.actions import Action
from adaroll.envs.base import Observation
from adaroll.registry import Registry


def last_actions(history: Sequence[Action], window: int) -> tuple[Action, ...]:
    """The last ``window`` actions of ``history`` (none when ``window <= 0``): the part of an
    episode's history a context shows. The one place histories are windowed."""
    return tuple(history[-window:]) if window > 0 else ()


@dataclass(frozen=True)
class Context:
    """What the policy conditions on at one decision: task text, observation, recent actions."""

    instruction: str
    observation: Observation
    history: tuple[Action, ...] = ()

    @classmethod
    def at(
        cls, instruction: str, observation: Observation, history: Sequence[Action], window: int
    ) -> Context:
        """The context of a state reached by ``history``, showing its last ``window`` actions
        (:func:`last_actions`)."""
        return cls(instruction, observation, last_actions(history, window))


@dataclass(frozen=True)
class SampledAction:
    """One sampled decision. ``action`` is None when the raw output did not parse (``valid``
    False): such a sample is kept, earns reward 0 and forms its own disagreement cluster."""

    action: Action | None
    log_prob: float
    raw: str = ""

    @property
    def valid(self) -> bool:
        return self.action is not None


DEFAULT_HISTORY_WINDOW = 4
"""Previous actions a context shows a policy that sets no window of its own."""


class Policy(ABC):
    """A stochastic GUI policy with exact log-probabilities of its samples."""

    @property
    def history_window(self) -> int:
        """How many of the latest actions a context shows the policy (``policy.history``: the
        policy's ``history_len``). The rollout layer and evaluation window histories with it."""
        return DEFAULT_HISTORY_WINDOW

    def represents(self, context: Context, action: Action) -> bool:
        """Whether the policy can output ``action`` at ``context`` at all (SFT skips demonstration
        steps it cannot represent); True unless a policy's action space says otherwise."""
        return True

    @abstractmethod
    def sample(
        self, contexts: Sequence[Context], n: int, *, greedy: bool = False
    ) -> list[list[SampledAction]]:
        """``n`` samples per context -> list (len B) of lists (len n). No gradients."""

    @abstractmethod
    def decision_log_probs(
        self, contexts: Sequence[Context], samples: Sequence[SampledAction]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-token (or per-factor) log-probs of ``samples[i]`` under ``contexts[i]``, with
        gradients: ``(logp [B, T], mask [B, T])``. Summing over T gives the sample's log-prob."""

    def log_prob(
        self, contexts: Sequence[Context], samples: Sequence[SampledAction]
    ) -> torch.Tensor:
        """Sequence log-probs ``[B]`` (with gradients)."""
        logp, mask = self.decision_log_probs(contexts, samples)
        return (logp * mask).sum(dim=-1)

    @abstractmethod
    def parameters(self) -> Sequence[torch.nn.Parameter]: ...

    @abstractmethod
    def state_dict(self) -> dict[str, Any]: ...

    @abstractmethod
    def load_state_dict(self, state: dict[str, Any]) -> None: ...

    @abstractmethod
    def save(self, path: Path) -> None:
        """Write weights and config (atomically) so that ``load`` restores an equal policy."""

    @classmethod
    @abstractmethod
    def load(cls, path: Path) -> Policy: ...

    def reseed(self, seed: int) -> None:
        """Reset the sampling randomness, so that runs resume exactly (the trainer reseeds
        every iteration from the run seed). Covers torch's global RNG and a ``generator``
        attribute, if the policy keeps its own."""
        torch.manual_seed(seed)
        generator = getattr(self, "generator", None)
        if isinstance(generator, torch.Generator):
            generator.manual_seed(seed)

    def sampling_state(self) -> Any | None:
        """Everything besides the weights and the contexts that the next samples depend on, or
        None when the policy cannot say (the default). With it the local collector runs several
        jobs at once, each sampling from its own seed's state, so a job's group is the same as
        when collected alone."""
        return None

    def set_sampling_state(self, state: Any) -> None:
        """Restore a :meth:`sampling_state`."""
        raise NotImplementedError(f"{type(self).__name__} has no sampling state to restore")

    def train(self, mode: bool = True) -> None:  # noqa: B027 - optional hook
        """Switch dropout etc.; no-op by default."""


POLICIES: Registry[Any] = Registry("policy")
"""Policy classes by kind: ``small``, ``hf``, ``remote``."""
