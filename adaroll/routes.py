"""The route vocabulary, defined once: where the scheduler sends a task (:class:`Route`), where a
group starts (:class:`StartKind`) and the mapping between the two (docs/architecture.md,
"The method").

A task's route says how far its groups roll out: one action at a pivot (Local), from a
checkpoint to the end (Suffix) or the whole task (Root); before its routing probes it is
unrouted. A route's training groups start as :attr:`Route.start` says: Local groups are OneStep
groups, Suffix and Root groups start as they are named. The inverse, :attr:`StartKind.route`,
comes from the same table. Every layer names routes and starts with these two types: the
scheduler and the bandit (:mod:`adaroll.training.scheduler`,
:mod:`adaroll.training.bandit_scheduler`), the jobs and starts of the rollout layer
(:mod:`adaroll.rollout`), the ledger's modes (:mod:`adaroll.training.ledger`) and the reports.

Both are ``StrEnum``\\ s: ledgers, summaries, metrics and scheduler states hold their plain
values (``local``, ``onestep``, ...), the same strings they have always held.
"""

from __future__ import annotations

from enum import StrEnum


class StartKind(StrEnum):
    """Where a group starts; each kind has one start class in :mod:`adaroll.rollout.starts`.
    It is also the group's ``mode`` in the ledger (the Vanilla baseline's groups excepted:
    :data:`VANILLA`)."""

    ONESTEP = "onestep"
    """At a checkpoint, one action per sample, rewarded by matching the expert's (no env)."""
    SUFFIX = "suffix"
    """From a branch of the checkpoint's snapshot, to the end of the episode."""
    ROOT = "root"
    """From a reset to the task, the whole episode."""

    @property
    def route(self) -> Route:
        """The route whose training groups start this way."""
        return _ROUTE_OF[self]


class Route(StrEnum):
    """Where the scheduler sends a task, in promotion order (:attr:`rank`)."""

    UNROUTED = "unrouted"
    """Not yet routed: its routing probes come first."""
    LOCAL = "local"
    """OneStep groups at the task's pivots (horizon: one action)."""
    SUFFIX = "suffix"
    """Suffix groups from the task's frontier pivot to the end of the episode."""
    ROOT = "root"
    """Root groups (the task's root probes): the whole task from a reset."""

    @property
    def start(self) -> StartKind:
        """How the route's training groups start. An unrouted task has none (only routing
        probes, which are Root starts): ValueError."""
        start = _START_OF[self]
        if start is None:
            raise ValueError(
                "an unrouted task has no training start: its routing probes come first"
            )
        return start

    @property
    def rank(self) -> int:
        """The route's place in the promotion order unrouted < local < suffix < root (the
        paper's promotion never lowers it)."""
        return _RANKS[self]


ROUTED = (Route.LOCAL, Route.SUFFIX, Route.ROOT)
"""The routes a task can be sent to (every route but unrouted), in promotion order."""

VANILLA = "vanilla"
"""The ledger mode of the Vanilla baseline's groups: Root starts, kept apart from the Root
groups of routed tasks."""

_START_OF: dict[Route, StartKind | None] = {
    Route.UNROUTED: None,
    Route.LOCAL: StartKind.ONESTEP,
    Route.SUFFIX: StartKind.SUFFIX,
    Route.ROOT: StartKind.ROOT,
}
_ROUTE_OF = {start: route for route, start in _START_OF.items() if start is not None}
_RANKS = {route: rank for rank, route in enumerate(Route)}
