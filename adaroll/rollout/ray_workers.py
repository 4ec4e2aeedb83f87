"""Distributed rollouts on Ray: many environment workers, one learner.

This is the only AdaRoll module that imports ``ray``; everything else runs without it. The
user-facing guide (local Ray, multi-node clusters) is ``docs/ray.md``.

* **Workers.** :class:`RolloutWorker` runs as a Ray actor (1 CPU). It owns a
  :class:`~adaroll.rollout.collector.Collector` over its own env factory and its own snapshot
  backend, built from the run's env name/options and backend name, and a copy of the policy.
  ``run(job, seed, version, weights)`` collects one job and returns a :class:`WorkerResult`:
  the :class:`~adaroll.rollout.jobs.Group` (every decision's context and sample, the rewards,
  the :class:`~adaroll.rollout.jobs.Cost`), the snapshot setup cost the job made the worker
  pay, and the policy version it sampled with.
* **Weights.** Each :meth:`RayCollector.collect` publishes the learner's weights once: one
  ``ray.put`` of the ``state_dict`` per version (:meth:`RayCollector.broadcast`). A worker
  loads them when the job's version differs from the one it holds. A result whose version is
  not the learner's current one is **discarded** - it never enters an update - and **counted**
  (``stats["stale"]``, and one ``Cost.faults`` on the job's group); the job is re-run with the
  current weights. The trainer waits for all groups of an iteration before updating, so in a
  training run this is a guard (a worker that kept old weights, a result of an abandoned
  collection), not a normal path.
* **Determinism.** A job is sampled on its own from ``job_seed(collection seed, job index)``,
  exactly as the local collector does by default: a group depends on (weights, job, seed) only,
  not on the worker that ran it, the order, or the other jobs. With the trainer's iteration
  seed, Ray and local runs give the same groups, ledger and final weights
  (``tests/rollout/test_ray_workers.py``). Retries reuse the job's seed, so a fault changes
  nothing but the fault counts.
* **Snapshot reachability.** Memory snapshots live in the process that saved them; CRIU images
  on the disk of the node that dumped them, owned by that process's backend. So a Suffix job
  (the only kind that restores a snapshot) is **pinned** to a worker slot by a stable hash of
  its checkpoint id (``crc32 % workers``); that worker builds the checkpoint's snapshot on first
  use by replaying the expert prefix and caches it, as the local collector does. The replayed
  steps come back as setup cost and are ledgered like the local collector's, so each
  checkpoint is built once per run on either backend. Cost of the choice: Suffix load is only
  as balanced as the hash (Root jobs, which need no snapshot, go to whichever worker is free
  and fill the gaps), and a replacement actor rebuilds its slot's snapshots (recorded, as
  replayed steps). OneStep jobs need no env at all: by default they run in the learner
  between dispatches (``local_onestep``), since shipping one policy forward to a worker and
  its contexts back costs more than it saves.
* **Env faults** (a crashed or hung env, :class:`~adaroll.envs.base.EnvFault`) are handled
  inside the worker by its :class:`~adaroll.rollout.collector.Collector`: the broken env is
  closed, the group re-run from its start with the same seed, and ``Cost.faults`` /
  ``Cost.restore_fallbacks`` come back with the group. Only when a group keeps failing there
  (``max_retries``) does the job fail as a whole and go through the worker-level path below.
* **Faults.** A job whose worker dies (actor crash, ``ray.kill``, lost node) or raises (env
  crash) is retried: the worker is killed and a fresh actor takes its slot (started with the
  slot's next job), the job goes back to the queue (a pinned job to its slot's new actor, a
  free one to any worker), and the group that finally comes back carries ``Cost.faults`` = its
  failed attempts, which the trainer writes to the ledger. A worker that returns nothing for
  ``job_timeout_s`` (counted from its actor being up) is treated the same way: a hang outside
  the env's own time limits. A failed attempt returns nothing, so none of its samples
  can enter an update; the env steps it spent are lost with it and are not ledgered. After
  ``max_retries`` failed attempts of one job, :class:`RolloutFailed` is raised.
* **Nodes.** ``worker_resources`` (``rollout.ray_worker_resources``) are custom Ray resources
  each worker asks for besides its CPU, so that workers land only on the nodes started with
  them (``ray start --resources``; docs/ray.md). A lost node is a fault of every job in flight
  on it: its actors are replaced (on a surviving or restarted node that offers the resources)
  and the jobs retried, as above. Every wait is bounded and its error names the setting that
  bounds it: an unreachable ``ray_address`` fails within ``start_timeout_s``
  (``rollout.ray_start_timeout_s``), a cluster that lacks a requested resource fails at once,
  and an actor that cannot be placed (no live node offers its resources) is a fault after
  ``start_timeout_s``, whether or not ``job_timeout_s`` is set.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ray
import torch
from ray.exceptions import GetTimeoutError, RayError

from adaroll.actions import PAPER_MATCHER, ActionMatcher
from adaroll.checkpoints import Checkpoint, CheckpointStore
from adaroll.config import RolloutConfig
from adaroll.envs.base import GUIEnv
from adaroll.policies.base import Context, Policy
from adaroll.rollout.collector import Collector, after_collect_seed, collection_seed, job_seed
from adaroll.rollout.distributed import WorkerResult, check_reachable, slot_for
from adaroll.rollout.jobs import Cost, Group, Job, RolloutFailed
from adaroll.rollout.retries import RetryRule
from adaroll.snapshots.base import SNAPSHOT_BACKENDS
from adaroll.snapshots.cache import BuildCosts
from adaroll.snapshots.replay import ReplaySnapshots

log = logging.getLogger("adaroll")


def connect(address: str | None = None, *, workers: int = 1, timeout_s: float = 600.0) -> None:
    """Join the Ray cluster at ``address``, or start a local Ray with ``max(workers, CPUs)``
    CPUs and no dashboard. A no-op when this process is already connected. An explicit
    ``HOST:PORT`` (or ``ray://HOST:PORT``) that accepts no connection within ``timeout_s``
    (``rollout.ray_start_timeout_s``, at most 30 s per try) is a :class:`RolloutFailed` naming
    ``rollout.ray_address``, not a wait on Ray's own reconnect loop.

    A local instance runs its workers at niceness 0 like the learner (Ray's default is 15,
    which lets every other process on a shared machine starve the rollouts); for a cluster
    started with ``ray start``, set ``RAY_worker_niceness=0`` there (docs/ray.md)."""
    if ray.is_initialized():
        return
    if address:
        check_reachable(address, timeout_s)
        ray.init(address=address)
    else:
        ray.init(
            num_cpus=max(workers, os.cpu_count() or 1),
            include_dashboard=False,
            _system_config={"worker_niceness": 0},
        )


# -- the worker ---------------------------------------------------------------------------------


class RolloutWorker:
    """One rollout worker (run as a Ray actor by :class:`RayCollector`; plain class here so it
    can be tested and profiled without Ray)."""

    def __init__(
        self,
        policy: Policy,
        make_env: Callable[[], GUIEnv],
        checkpoints: CheckpointStore,
        snapshot_backend: str,
        history_window: int | None = None,
        matcher: ActionMatcher = PAPER_MATCHER,
        max_retries: int = 3,
        episodes_per_env: int = 1,
    ) -> None:
        backend = SNAPSHOT_BACKENDS.get(snapshot_backend)(make_env=make_env)
        self.collector = Collector(
            policy,
            make_env,
            checkpoints,
            backend,
            history_window=history_window,
            matcher=matcher,
            max_retries=max_retries,
            episodes_per_env=episodes_per_env,
        )
        self.version = -1

    def run(self, job: Job, seed: int, version: int, weights: Sequence[Any]) -> WorkerResult:
        """Collect ``job`` with the weights of ``version`` (``weights[0]``: an object ref,
        wrapped in a list so that Ray hands it over unresolved and it is fetched only when the
        worker does not hold that version yet)."""
        if version != self.version:
            state = weights[0]
            if isinstance(state, ray.ObjectRef):
                state = ray.get(state)
            self.collector.policy.load_state_dict(state)
            self.version = version
        began = time.perf_counter()
        group = self.collector.collect_job(job, seed)
        setup = Cost(replayed_steps=self.collector.builds.take_overhead())
        return WorkerResult(self.version, group, setup, os.getpid(), time.perf_counter() - began)

    def pid(self) -> int:
        return os.getpid()

    def node_id(self) -> str:
        """The Ray node this worker runs on (hex id)."""
        return str(ray.get_runtime_context().get_node_id())

    def close(self) -> None:
        self.collector.close()
        self.collector.snapshots.close()


_RemoteWorker = ray.remote(num_cpus=1, max_restarts=0)(RolloutWorker)


# -- the learner's side -------------------------------------------------------------------------


@dataclass
class _Slot:
    actor: Any
    """The Ray actor, or None after a fault until the slot's next job starts a fresh one."""
    generation: int
    ready: Any
    """The actor's start-up call while it is starting (its jobs' clock starts once it is up)."""
    last_progress: float
    """``time.monotonic()`` of the slot's last result, or of its first job after being idle or
    after its actor started."""


@dataclass(frozen=True)
class _Flight:
    job: int
    slot: int
    generation: int


class RayCollector:
    """The :class:`~adaroll.rollout.collector.Collector` interface (``collect``,
    ``builds``, ``context_at``, ``close``) over ``workers`` Ray actors.

    Actors start on the first ``collect`` that has remote work (so building one only for
    ``context_at`` costs nothing); Ray is started locally then if this process has not joined a
    cluster (:func:`connect`). ``make_env`` must pickle (:class:`EnvFactory`, a class, a
    module-level function), and so must the policy. ``on_submit(slot, job_index)``, if set, is
    called after every dispatch (fault-injection hook for tests and chaos runs)."""

    def __init__(
        self,
        policy: Policy,
        make_env: Callable[[], GUIEnv],
        checkpoints: CheckpointStore,
        snapshot_backend: str,
        *,
        history_window: int | None = None,
        workers: int = 2,
        matcher: ActionMatcher = PAPER_MATCHER,
        max_retries: int = 3,
        local_onestep: bool = True,
        inflight_per_worker: int = 2,
        ray_address: str | None = None,
        start_timeout_s: float = 600.0,
        job_timeout_s: float | None = 900.0,
        episodes_per_env: int = 1,
        worker_resources: Mapping[str, float] | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        SNAPSHOT_BACKENDS.get(snapshot_backend)  # fail here on an unknown name, with the list
        self.policy, self.make_env, self.checkpoints = policy, make_env, checkpoints
        self.snapshot_backend, self.history_window, self.matcher = (
            snapshot_backend,
            history_window,
            matcher,
        )
        self.workers, self.max_retries = workers, max_retries
        self.retries = RetryRule(max_retries)
        self.local_onestep, self.inflight_per_worker = local_onestep, max(1, inflight_per_worker)
        self.ray_address, self.start_timeout_s = ray_address, start_timeout_s
        self.job_timeout_s, self.episodes_per_env = job_timeout_s, episodes_per_env
        self.worker_resources = dict(worker_resources or {})
        # OneStep jobs in the learner: checkpoints only, the snapshot backend is never used.
        self.local = Collector(
            policy,
            make_env,
            checkpoints,
            ReplaySnapshots(make_env=make_env),
            history_window=history_window,
            matcher=matcher,
        )
        self.builds = BuildCosts(self.prefix_length)
        """Snapshot (re)building paid by the workers, and what the phase is billed for it."""
        self.version = 0
        """Policy version of the weights last published (0: none yet)."""
        self.stats = {"remote_jobs": 0, "local_jobs": 0, "faults": 0, "stale": 0, "replaced": 0}
        self.on_submit: Callable[[int, int], None] | None = None
        self.current_jobs: Sequence[Job] = ()
        """The jobs of the collection in progress (what ``on_submit``'s job index refers to)."""
        self._slots: list[_Slot] = []
        self._generations = itertools.count()
        self._weights: Any = None
        self._policy_ref: Any = None
        self._store_ref: Any = None

    @classmethod
    def from_config(
        cls,
        cfg: RolloutConfig,
        policy: Policy,
        make_env: Callable[[], GUIEnv],
        checkpoints: CheckpointStore,
        snapshot_backend: str,
        *,
        matcher: ActionMatcher = PAPER_MATCHER,
        env_episodes_per_env: int = 1,
    ) -> RayCollector:
        """The Ray collector ``cfg`` configures (``env_episodes_per_env``: the env kind's choice,
        used when ``cfg.episodes_per_env`` is unset)."""
        per_env = cfg.episodes_per_env if cfg.episodes_per_env is not None else env_episodes_per_env
        return cls(
            policy,
            make_env,
            checkpoints,
            snapshot_backend,
            matcher=matcher,
            workers=cfg.workers,
            max_retries=cfg.max_retries,
            ray_address=cfg.ray_address,
            job_timeout_s=cfg.job_timeout_s,
            start_timeout_s=cfg.ray_start_timeout_s,
            worker_resources=cfg.ray_worker_resources,
            episodes_per_env=per_env,
        )

    # -- the Collector interface ------------------------------------------------------------------
    def context_at(self, checkpoint: Checkpoint) -> Context:
        return self.local.context_at(checkpoint)

    def prefix_length(self, checkpoint_id: str) -> int:
        return self.local.prefix_length(checkpoint_id)

    def collect(self, jobs: Sequence[Job], *, seed: int | None = None) -> list[Group]:
        """One group per job, in job order, equal to what :class:`Collector` returns for the
        same weights, jobs and seed."""
        base = collection_seed(seed)
        self.current_jobs = jobs
        here = [self.local_onestep and not self.local.starts[job.kind].rolls_out for job in jobs]
        local = deque(j for j in range(len(jobs)) if here[j])
        remote = [j for j in range(len(jobs)) if not here[j]]
        groups: list[Group | None] = [None] * len(jobs)
        faults = [0] * len(jobs)
        if remote:
            self._start()
            self.broadcast()
        free: deque[int] = deque()
        pinned: list[deque[int]] = [deque() for _ in range(self.workers)]

        def queue_of(job: Job) -> deque[int]:
            """A job that restores a snapshot runs on its checkpoint's slot, others anywhere."""
            if self.local.starts[job.kind].restores and job.checkpoint_id is not None:
                return pinned[slot_for(job.checkpoint_id, self.workers)]
            return free

        for j in remote:
            queue_of(jobs[j]).append(j)
        inflight: dict[Any, _Flight] = {}

        def requeue(j: int, exc: BaseException | None, why: str) -> None:
            faults[j] += 1
            self.stats["faults"] += 1
            self.retries.retry(jobs[j], faults[j], why, exc)
            queue_of(jobs[j]).appendleft(j)

        while local or free or any(pinned) or inflight:
            self._top_up(jobs, base, free, pinned, inflight)
            timeout: float | None = None
            if local:
                j = local.popleft()
                groups[j] = self.local.collect_job(jobs[j], job_seed(base, j))
                self.stats["local_jobs"] += 1
                timeout = 0
            if not inflight:
                continue
            watchdog = timeout is None
            if watchdog:
                deadline = self._next_deadline(inflight)
                timeout = None if math.isinf(deadline) else max(0.0, deadline - time.monotonic())
            ready, _ = ray.wait(
                list(inflight), num_returns=len(inflight) if timeout == 0 else 1, timeout=timeout
            )
            if watchdog and not ready:
                for flight, why in self._hung(inflight):
                    requeue(flight.job, None, why)
            for ref in ready:
                flight = inflight.pop(ref)
                self._slots[flight.slot].last_progress = time.monotonic()
                try:
                    result: WorkerResult = ray.get(ref)
                except RayError as exc:  # the actor died, or the job raised (env crash)
                    self._replace(flight)
                    requeue(flight.job, exc, f"{type(exc).__name__}: {_first_line(exc)}")
                    continue
                self.builds.add_build(result.setup.replayed_steps)
                if result.version != self.version:
                    self.stats["stale"] += 1
                    requeue(
                        flight.job,
                        None,
                        f"stale result (version {result.version}, current {self.version})",
                    )
                    continue
                groups[flight.job] = result.group
                self.stats["remote_jobs"] += 1
        self.policy.reseed(after_collect_seed(base))
        out: list[Group] = []
        for j, group in enumerate(groups):
            assert group is not None
            group.job = jobs[j]  # the learner's own Job object, not the worker's copy
            group.cost = group.cost + Cost(faults=faults[j])
            out.append(group)
        return out

    def broadcast(self) -> int:
        """Publish the policy's current weights as a new version (one ``ray.put``); workers
        load them with their next job. Returns the new version."""
        state = {
            k: v.detach().cpu().clone() if isinstance(v, torch.Tensor) else v
            for k, v in self.policy.state_dict().items()
        }
        self._weights = ray.put(state)
        self.version += 1
        return self.version

    def actor(self, slot: int) -> Any:
        """The Ray actor currently serving ``slot`` (None between a fault and the slot's next
        job); for fault injection and inspection."""
        return self._slots[slot].actor

    def close(self) -> None:
        for slot in self._slots:
            if slot.actor is None:
                continue
            if slot.ready is not None and not ray.wait([slot.ready], timeout=0)[0]:
                ray.kill(
                    slot.actor, no_restart=True
                )  # never started (not placed): nothing to close
                continue
            try:
                ray.get(slot.actor.close.remote(), timeout=60)
            except (RayError, TimeoutError):
                pass
            ray.kill(slot.actor, no_restart=True)
        self._slots = []

    # -- pieces -------------------------------------------------------------------------------------
    def _start(self) -> None:
        if self._slots:
            return
        connect(self.ray_address, workers=self.workers, timeout_s=self.start_timeout_s)
        self._check_resources()
        self._policy_ref = ray.put(self.policy)
        self._store_ref = ray.put(self.checkpoints)
        self._slots = [self._spawn() for _ in range(self.workers)]
        # Wait for the actors, so that a worker that cannot start fails here with its reason,
        # and one that cannot be placed (no free CPU) fails instead of waiting forever.
        try:
            ray.get([slot.ready for slot in self._slots], timeout=self.start_timeout_s)
            for slot in self._slots:
                slot.ready = None
        except GetTimeoutError:
            self.close()
            free = ray.available_resources()
            asked = ", ".join(f"{k} {v:g}" for k, v in {"CPU": 1, **self.worker_resources}.items())
            raise RolloutFailed(
                f"{self.workers} rollout workers ({asked} each) did not start within "
                f"rollout.ray_start_timeout_s = {self.start_timeout_s:g} s; free in the cluster: "
                + ", ".join(f"{k} {free.get(k, 0):g}" for k in {"CPU": 1, **self.worker_resources})
            ) from None

    def _check_resources(self) -> None:
        """A requested custom resource that no node of the cluster has is an error now, not a
        placement that never happens."""
        total = ray.cluster_resources()
        missing = {k: v for k, v in self.worker_resources.items() if total.get(k, 0) < v}
        if missing:
            have = sorted(
                k
                for k in total
                if not k.startswith("node:") and k != "memory" and not k.startswith("object_store")
            )
            raise RolloutFailed(
                f"rollout.ray_worker_resources asks each worker for {missing}, "
                f"but no node of the cluster has that much (the cluster has: "
                f"{', '.join(have)}); start a node with `ray start --resources` "
                f"(docs/ray.md)"
            )

    def _spawn(self) -> _Slot:
        remote = (
            _RemoteWorker.options(resources=self.worker_resources)
            if self.worker_resources
            else _RemoteWorker
        )
        actor: Any = remote.remote(
            self._policy_ref,
            self.make_env,
            self._store_ref,
            self.snapshot_backend,
            self.history_window,
            self.matcher,
            self.max_retries,
            self.episodes_per_env,
        )
        return _Slot(actor, next(self._generations), actor.pid.remote(), time.monotonic())

    def _busy_slots(self, inflight: dict[Any, _Flight]) -> set[int]:
        return {f.slot for f in inflight.values() if f.generation == self._slots[f.slot].generation}

    def _deadline(self, slot: _Slot) -> float:
        """When a busy slot runs out of time (inf: never). A starting actor gets
        ``start_timeout_s`` (even without ``job_timeout_s``: an actor no live node can host is
        a fault, not a wait forever), and its clock restarts once it is seen up, so a slow start
        is never taken for a hang."""
        if slot.ready is not None and ray.wait([slot.ready], timeout=0)[0]:
            slot.ready, slot.last_progress = None, time.monotonic()
        if slot.ready is not None:
            return slot.last_progress + self.start_timeout_s
        return math.inf if self.job_timeout_s is None else slot.last_progress + self.job_timeout_s

    def _next_deadline(self, inflight: dict[Any, _Flight]) -> float:
        return min(self._deadline(self._slots[s]) for s in self._busy_slots(inflight))

    def _hung(self, inflight: dict[Any, _Flight]) -> list[tuple[_Flight, str]]:
        """Replace every busy slot past its deadline (an actor no node could start, or one stuck
        outside any env time limit: a deadlock, a hung driver) and take its flights out of
        ``inflight``, each with the reason."""
        lost = []
        for s in sorted(self._busy_slots(inflight)):
            if self._deadline(self._slots[s]) > time.monotonic():
                continue
            if self._slots[s].ready is not None:
                why = (
                    f"worker slot {s}: its actor did not start within rollout.ray_start_timeout_s"
                    f" = {self.start_timeout_s:g} s (no live node with CPU 1"
                    + "".join(f", {k} {v:g}" for k, v in self.worker_resources.items())
                    + " free?)"
                )
            else:
                why = (
                    f"worker slot {s} returned nothing for rollout.job_timeout_s = "
                    f"{self.job_timeout_s:g} s (hung)"
                )
            log.warning("rollout %s: replaced", why)
            generation = self._slots[s].generation
            self._replace(
                next(f for f in inflight.values() if (f.slot, f.generation) == (s, generation))
            )
            lost += [
                (inflight.pop(ref), why) for ref in [r for r, f in inflight.items() if f.slot == s]
            ]
        return lost

    def _replace(self, flight: _Flight) -> None:
        """Kill the flight's actor (once per dead actor); a fresh one takes its slot when the
        slot gets its next job."""
        slot = self._slots[flight.slot]
        if slot.generation != flight.generation or slot.actor is None:
            return  # already replaced because of an earlier failure of the same actor
        ray.kill(slot.actor, no_restart=True)
        self._slots[flight.slot] = _Slot(None, next(self._generations), None, time.monotonic())
        self.stats["replaced"] += 1

    def _top_up(
        self,
        jobs: Sequence[Job],
        base: int,
        free: deque[int],
        pinned: list[deque[int]],
        inflight: dict[Any, _Flight],
    ) -> None:
        for s, slot in enumerate(self._slots):
            busy = sum(
                1 for f in inflight.values() if f.slot == s and f.generation == slot.generation
            )
            if busy == 0:  # the watchdog's clock starts with the first job of an idle slot
                slot.last_progress = time.monotonic()
            while busy < self.inflight_per_worker:
                queue = pinned[s] if pinned[s] else free
                if not queue:
                    break
                j = queue.popleft()
                if slot.actor is None:  # replaced after a fault: start its successor now
                    slot = self._slots[s] = self._spawn()
                ref = slot.actor.run.remote(
                    jobs[j], job_seed(base, j), self.version, [self._weights]
                )
                inflight[ref] = _Flight(j, s, slot.generation)
                busy += 1
                if self.on_submit is not None:
                    self.on_submit(s, j)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else ""
