"""The retry rule, the same for every trainer: a group that an env fault (or a lost worker)
touched is never trained on; it is collected again from its start - a reset, or a fresh restore -
with the same seed, so the retried group equals the one a fault-free run collects. The failed
attempts' work stays in the group's cost (it was spent) and ``Cost.faults`` counts them; after
``max_retries`` failed attempts of one group :class:`~adaroll.rollout.jobs.RolloutFailed` is
raised.

Who applies it: the collector to env faults inside an attempt
(:mod:`adaroll.rollout.collector`), the Ray collector to workers that die, hang or hand back a
stale result (:mod:`adaroll.rollout.ray_workers`), and the framework feed to a reported group
that an env fault hit (:mod:`adaroll.integrations.feed`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from adaroll.rollout.jobs import Job, RolloutFailed

log = logging.getLogger("adaroll")


@dataclass(frozen=True)
class RetryRule:
    """Re-run a faulted group at most ``max_retries`` times (see the module docstring)."""

    max_retries: int = 3

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")

    def retry(
        self, job: Job, failures: int, why: object, cause: BaseException | None = None
    ) -> None:
        """After the ``failures``-th failed attempt at ``job``'s group: log that it runs again,
        or raise :class:`RolloutFailed` (from ``cause``) when that was one attempt too many."""
        if failures > self.max_retries:
            raise RolloutFailed(
                f"{job.kind} group for {job.task.id} failed on {failures} attempt(s); last: {why}"
            ) from cause
        log.warning("%s group for %s re-run after a fault: %s", job.kind, job.task.id, why)
