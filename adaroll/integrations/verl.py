"""AdaRoll inside verl: a curriculum sampler carrying the scheduler, and the start kinds as agent
loops (verl >= 0.7.1, < 0.8: the line that has ``AbstractCurriculumSampler``).

The recipe (docs/integrations.md has the full configuration)::

    # mymodule.py
    def make_setup() -> VerlSetup: ...     # scheduler, Starts, ledger, group size (= rollout.n)

    python -m verl.trainer.main_ppo ... \\
        data.train_files=starts.parquet  (written by write_start_rows(make_setup(), path)) \\
        data.sampler.class_path=pkg://adaroll.integrations.verl \\
        data.sampler.class_name=AdaRollCurriculumSampler \\
        +data.adaroll_setup=mymodule:make_setup data.dataloader_num_workers=0 \\
        actor_rollout_ref.rollout.mode=async actor_rollout_ref.rollout.n=G \\
        actor_rollout_ref.rollout.agent.agent_loop_config_path=loops.yaml  (write_agent_loops)

* **Rows.** verl's dataset is static, so it holds one row per possible start
  (:func:`start_rows`): Root (train and routing), Suffix and Local at every checkpoint, and one
  idle row. Each row's ``agent_name`` picks the agent loop of its start kind.
* **Sampler.** :class:`AdaRollCurriculumSampler` yields, slot by slot, the index of the row of
  the scheduler's next job (:class:`~adaroll.integrations.feed.ScheduleFeed`: with verl's
  ``num_workers=0`` the loader asks for a batch after ``update`` of the last one). ``update(batch)``
  groups the batch by ``uid``, matches each group to its slot by the start it reports, bills it
  in AdaRoll's ledger and lets the scheduler observe.
* **Agent loops** (registered with verl's ``register``): ``adaroll_onestep``, ``adaroll_suffix``,
  ``adaroll_root``, ``adaroll_idle``. A loop opens its start through
  :class:`~adaroll.rollout.sessions.Starts` in an executor thread (the G loops of a Suffix
  group run as concurrent coroutines, so their restores run in parallel), asks verl's server for
  one action per turn, plays it, appends the new state as a user turn (response mask 0), and
  returns AdaRoll's reward as ``reward_score`` plus its cost and the seconds it ran in
  ``extra_fields`` (the sampler bills each group its share of the batch's longest sample: the
  batch's wall time). Routing probes and idle rows return reward 0 for every sample (no
  gradient) and their real outcome in ``extra_fields``.

Untested here (no GPU, no model server): verl's trainer itself (``main_ppo``, Ray workers,
FSDP, vLLM/SGLang servers). The tests drive the sampler and the agent loops with verl's own
classes and a fake server (tests/integrations/test_verl.py); :mod:`adaroll.examples.verl_phone`
trains a tiny model through them on CPU, a small loop of ours in place of verl's trainer.
Known difference from AdaRoll's
trainer: verl fixes rewards inside the loops, so a group where one sample hit an env fault
still trains on its other samples (AdaRoll re-runs the whole group); the fault is billed and the
job re-queued all the same.
"""

from __future__ import annotations

import asyncio
import importlib
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import verl

from adaroll.integrations.versions import VERL_RANGE, check_version

check_version("verl", verl.__version__, VERL_RANGE)

from verl.experimental.agent_loop.agent_loop import (  # noqa: E402 - after the version check
    AgentLoopBase,
    AgentLoopMetrics,
    AgentLoopOutput,
    register,
)
from verl.experimental.dataset.sampler import AbstractCurriculumSampler  # noqa: E402

from adaroll.integrations.feed import Bound, ScheduleFeed  # noqa: E402
from adaroll.integrations.rows import IDLE, RowSession  # noqa: E402
from adaroll.rollout.jobs import PROBES, Cost  # noqa: E402
from adaroll.rollout.sessions import Starts  # noqa: E402
from adaroll.routes import StartKind  # noqa: E402
from adaroll.training.ledger import Ledger  # noqa: E402
from adaroll.training.scheduler import Scheduler  # noqa: E402

AGENTS = {name: f"adaroll_{name}" for name in (*(k.value for k in StartKind), IDLE)}
"""The agent loop of each start kind and of idle rows: ``adaroll_onestep``, ..., ``adaroll_idle``."""
COST_FIELDS = (
    "policy_samples",
    "env_steps",
    "restores",
    "restore_seconds",
    "replayed_steps",
    "invalid_samples",
    "restore_fallbacks",
)


@dataclass
class VerlSetup:
    """What a user's setup function returns: the same in the driver and in every worker."""

    scheduler: Scheduler
    starts: Starts
    ledger_path: Path
    group_size: int
    """Samples per row (verl's ``actor_rollout_ref.rollout.n``)."""
    stage: str = "hybrid"


def start_key(kind: str, task_id: str, checkpoint_id: str | None, purpose: str) -> str:
    return f"{kind}|{purpose}|{task_id}|{checkpoint_id or ''}"


def start_rows(setup: VerlSetup) -> list[dict[str, Any]]:
    """One dataset row per possible start (the order :class:`AdaRollCurriculumSampler` indexes)."""
    rows: list[dict[str, Any]] = []

    def add(kind: str, task_id: str, checkpoint_id: str | None, purpose: str) -> None:
        rows.append(
            {
                "data_source": "adaroll",
                "agent_name": AGENTS[kind],
                "prompt": [{"role": "user", "content": f"AdaRoll {kind} start of {task_id}"}],
                "reward_model": {"style": "rule", "ground_truth": ""},
                "adaroll_start": start_key(kind, task_id, checkpoint_id, purpose),
                "adaroll_kind": str(kind),
                "adaroll_task_id": task_id,
                "adaroll_checkpoint_id": checkpoint_id or "",
                "adaroll_purpose": purpose,
            }
        )

    for task_id in sorted(setup.starts.tasks):
        add(StartKind.ROOT, task_id, None, "train")
        add(StartKind.ROOT, task_id, None, "routing")  # routing probes are Root starts
        add(StartKind.ROOT, task_id, None, "reeval")  # so are re-evaluation probes
        for checkpoint in setup.starts.checkpoints.for_task(task_id):
            add(StartKind.SUFFIX, task_id, checkpoint.id, "train")
            add(StartKind.ONESTEP, task_id, checkpoint.id, "train")
    add(IDLE, "", None, "train")
    return rows


def write_start_rows(setup: VerlSetup, path: Path) -> Path:
    """The rows as the parquet file verl's ``data.train_files`` reads."""
    import datasets

    datasets.Dataset.from_list(start_rows(setup)).to_parquet(str(path))
    return Path(path)


def write_agent_loops(path: Path) -> Path:
    """The four agent loops as the YAML verl's
    ``actor_rollout_ref.rollout.agent.agent_loop_config_path`` reads: every agent-loop worker
    registers them from it (verl's ``register`` only runs in a process that imports this
    module, which a worker need not have done)."""
    import yaml

    loops = (AdaRollOneStepLoop, AdaRollSuffixLoop, AdaRollRootLoop, AdaRollIdleLoop)
    entries = [
        {"name": AGENTS[loop.kind], "_target_": f"{loop.__module__}.{loop.__qualname__}"}
        for loop in loops
    ]
    Path(path).write_text(yaml.safe_dump(entries, sort_keys=False))
    return Path(path)


_SETUPS: dict[str, VerlSetup] = {}


def load_setup(spec: str) -> VerlSetup:
    """``module:function`` -> the setup it returns (made once per process)."""
    if spec not in _SETUPS:
        module, _, name = spec.partition(":")
        if not name:
            raise ValueError(f"adaroll_setup must be 'module:function', got {spec!r}")
        factory: Callable[[], VerlSetup] = getattr(importlib.import_module(module), name)
        _SETUPS[spec] = factory()
    return _SETUPS[spec]


def provide_setup(spec: str, setup: VerlSetup) -> None:
    """Make ``spec`` name ``setup`` in this process without importing anything: for a driver
    that builds its setup itself and runs verl's loops in its own process (the CPU example,
    :mod:`adaroll.examples.verl_phone`). verl's Ray workers are other processes: they import
    ``module:function`` as :func:`load_setup` says."""
    _SETUPS[spec] = setup


def opening_messages(session: RowSession) -> list[dict[str, str]]:
    """The chat an agent loop opens with: AdaRoll's system prompt and the start's state (what a
    warm start must teach, :mod:`adaroll.examples.verl_phone`)."""
    return [
        {"role": "system", "content": RowSession.system_prompt()},
        {"role": "user", "content": session.prompt()},
    ]


def _setup_spec(config: Any) -> str:
    spec = config.get("adaroll_setup") if hasattr(config, "get") else None
    if not spec:
        raise ValueError(
            "set data.adaroll_setup to 'module:function' returning an adaroll VerlSetup"
        )
    return str(spec)


class AdaRollCurriculumSampler(AbstractCurriculumSampler):
    """verl's ``data.sampler``: the scheduler's next starts, and its observations after each step."""

    def __init__(self, data_source: Sequence[Any], data_config: Any) -> None:
        self.setup = load_setup(_setup_spec(data_config))
        rows = start_rows(self.setup)
        if len(data_source) != len(rows):
            raise ValueError(
                f"the training dataset has {len(data_source)} rows but the AdaRoll setup has "
                f"{len(rows)} starts: write data.train_files with write_start_rows(setup, path)"
            )
        self.index = {row["adaroll_start"]: i for i, row in enumerate(rows)}
        self.feed = ScheduleFeed(
            self.setup.scheduler,
            Ledger(self.setup.ledger_path),
            self.setup.starts,
            group_size=self.setup.group_size,
            stage=self.setup.stage,
            prefetch=False,
        )
        self.pending: list[Bound] = []
        self._slots = 0
        self.total = int(data_config.get("adaroll_rows", 1_000_000))

    def __iter__(self) -> Iterator[int]:
        while self._slots < self.total:
            bound = self.feed.bind(self._slots)
            self._slots += 1
            self.pending.append(bound)
            job = bound.job
            key = (
                start_key(job.kind, job.task.id, job.checkpoint_id, job.purpose)
                if job is not None
                else start_key(IDLE, "", None, "train")
            )
            yield self.index[key]

    def __len__(self) -> int:
        return self.total

    def update(self, batch: Any) -> None:
        """Bill and observe the groups of a finished step (``batch``: verl's DataProto)."""
        extra = batch.non_tensor_batch
        groups: dict[Any, list[int]] = defaultdict(list)
        for i, uid in enumerate(extra["uid"]):
            groups[uid].append(i)
        # wall seconds: verl runs a batch's samples at once, so the batch took as long as its
        # longest sample (open, turns, env steps); shared by its groups, as AdaRollTRL does
        wall = max(float(s) for s in extra["adaroll_seconds"]) / max(1, len(groups))
        for rows in groups.values():
            key = str(extra["adaroll_start"][rows[0]])
            bound = next((b for b in self.pending if _key(b) == key), None)
            if bound is None:
                raise ValueError(
                    f"a batch group reports start {key!r}, which no pending slot holds"
                )
            self.pending.remove(bound)
            cost = Cost()
            for i in rows:
                sample = extra["adaroll_cost"][i]
                cost = cost + Cost(**{name: sample[name] for name in COST_FIELDS})
                self.setup.starts.builds.add_build(int(sample["setup_replayed_steps"]))
            faulted = any(bool(extra["adaroll_faulted"][i]) for i in rows)
            cost = replace(cost, faults=int(faulted), wall_seconds=wall)
            self.feed.report(
                bound.slot,
                [float(extra["adaroll_reward"][i]) for i in rows],
                cost,
                [int(extra["adaroll_decisions"][i]) for i in rows],
                faulted=faulted,
            )


def _key(bound: Bound) -> str:
    job = bound.job
    if job is None:
        return start_key(IDLE, "", None, "train")
    return start_key(job.kind, job.task.id, job.checkpoint_id, job.purpose)


class _AdaRollAgentLoop(AgentLoopBase):
    """One sample of one start: turns of (generate one action, play it) until the budget ends."""

    kind: ClassVar[str] = ""
    """The start kind of the loop's rows (a :class:`~adaroll.routes.StartKind` value), or idle."""

    def _starts(self) -> Starts:
        return load_setup(_setup_spec(self.data_config)).starts

    async def _open(self, starts: Starts, purpose: str, kwargs: dict[str, Any]) -> RowSession:
        if self.kind == IDLE:
            return RowSession.idle()
        job = starts.job(
            self.kind,
            str(kwargs.get("adaroll_task_id", "")),
            str(kwargs.get("adaroll_checkpoint_id") or "") or None,
            next((p for p in PROBES if p == purpose), "train"),  # probes keep their purpose
        )
        # the restore (or reset) in a thread: the G coroutines of a group restore in parallel
        opened = await asyncio.get_running_loop().run_in_executor(None, starts.open, job)
        return RowSession(job, opened, starts.history_window)

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        started = time.perf_counter()  # this process's clock: a duration, never a timestamp
        starts = self._starts()
        loop = asyncio.get_running_loop()
        purpose = str(kwargs.get("adaroll_purpose", "train"))
        session = await self._open(starts, purpose, kwargs)
        setup_replayed = starts.builds.take_overhead()
        response_length = int(self.config.actor_rollout_ref.rollout.response_length)
        prompt_ids = await self.apply_chat_template(opening_messages(session))
        response_ids: list[int] = []
        mask: list[int] = []
        logprobs: list[float] = []
        turns = 0
        while True:
            out = await self.server_manager.generate(
                request_id=f"adaroll-{id(session)}",
                prompt_ids=prompt_ids + response_ids,
                sampling_params=sampling_params,
            )
            response_ids += out.token_ids
            mask += [1] * len(out.token_ids)
            logprobs += out.log_probs or [0.0] * len(out.token_ids)
            turns += 1
            if session.steps_left <= 0:  # idle or faulted at the start: the text plays nothing
                break
            tokenizer: Any = self.tokenizer
            text = tokenizer.decode(out.token_ids, skip_special_tokens=True)
            feedback = await loop.run_in_executor(None, session.act, text)
            if session.steps_left <= 0 or len(response_ids) >= response_length:
                break
            turn = await self.apply_chat_template(
                [{"role": "user", "content": feedback}], remove_system_prompt=True
            )
            response_ids += turn
            mask += [0] * len(turn)
            logprobs += [0.0] * len(turn)
        session.close()
        reward = session.reward()
        trains = self.kind != IDLE and purpose == "train" and session.fault is None
        cost = {name: getattr(session.cost, name) for name in COST_FIELDS}
        cost["setup_replayed_steps"] = setup_replayed
        return AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=response_ids[:response_length],
            response_mask=mask[:response_length],
            response_logprobs=logprobs[:response_length],
            reward_score=reward if trains else 0.0,
            num_turns=2 * turns,
            metrics=AgentLoopMetrics(),
            extra_fields={
                "adaroll_start": str(kwargs.get("adaroll_start", "")),
                "adaroll_reward": reward,
                "adaroll_cost": cost,
                "adaroll_decisions": session.decisions,
                "adaroll_faulted": session.fault is not None,
                "adaroll_seconds": time.perf_counter() - started,
            },
        )


@register(AGENTS[StartKind.ONESTEP])
class AdaRollOneStepLoop(_AdaRollAgentLoop):
    """Local: one action at a pivot, rewarded by expert match (no env step)."""

    kind = StartKind.ONESTEP


@register(AGENTS[StartKind.SUFFIX])
class AdaRollSuffixLoop(_AdaRollAgentLoop):
    """Suffix: an episode from a restored checkpoint to its end, rewarded by task success."""

    kind = StartKind.SUFFIX


@register(AGENTS[StartKind.ROOT])
class AdaRollRootLoop(_AdaRollAgentLoop):
    """Root: an episode from a task reset, rewarded by task success."""

    kind = StartKind.ROOT


@register(AGENTS[IDLE])
class AdaRollIdleLoop(_AdaRollAgentLoop):
    """An idle row at an iteration barrier: one generation, reward 0, billed as overhead."""

    kind = IDLE
