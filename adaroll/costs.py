"""The cost counters, defined once: what collecting a group cost
(:class:`~adaroll.rollout.jobs.Group`), a ledger record's counters and their totals
(:mod:`adaroll.training.ledger`), and a configuration's bill (:mod:`adaroll.training.bill`) are
all :class:`Counters`, each adding only its own tags.

Units (docs/RESULTS.md "How we measure"): an env step is one action executed in an env, a
policy sample one action drawn from the policy, a training sample one decision entering one
gradient step.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Self


@dataclass(frozen=True, kw_only=True)
class Counters:
    """What some work cost (immutable: add with ``+`` or :meth:`plus`)."""

    training_samples: int = 0
    """Decisions that entered a policy update (zero-variance groups contribute none)."""
    policy_samples: int = 0
    """Decisions drawn from the policy (every sample, used or not)."""
    env_steps: int = 0
    """Environment interaction steps (actions executed in an env)."""
    restores: int = 0
    """Snapshot restores."""
    restore_seconds: float = 0.0
    """Wall seconds spent restoring snapshots."""
    replayed_steps: int = 0
    """Env steps replayed to reach a start state (replay backend / snapshot building)."""
    wall_seconds: float = 0.0
    """Wall seconds of the unit of work."""
    invalid_samples: int = 0
    """Samples whose model output did not parse."""
    faults: int = 0
    """Failed attempts at collecting (a crashed/hung env, a lost worker), each one re-run."""
    restore_fallbacks: int = 0
    """Snapshot restores that failed verification and were replaced by replaying the prefix."""

    def plus(self, other: Counters) -> Self:
        """This value with ``other``'s counters added (its other fields kept)."""
        return replace(
            self, **{name: getattr(self, name) + getattr(other, name) for name in COUNTERS}
        )

    def __add__(self, other: Counters) -> Self:
        return self.plus(other)

    def counters(self) -> dict[str, Any]:
        """The counters alone, by name, in declaration order."""
        return {name: getattr(self, name) for name in COUNTERS}


COUNTERS = tuple(f.name for f in fields(Counters))
"""Every counter, in declaration order."""
FLOAT_COUNTERS = tuple(f.name for f in fields(Counters) if f.type in (float, "float"))
"""The counters measured in seconds (floats)."""
INT_COUNTERS = tuple(name for name in COUNTERS if name not in FLOAT_COUNTERS)
"""The counters that count (non-negative ints)."""
