"""`adaroll run`: the whole method end to end, resumable step by step.

experts (pretrain + train splits) -> Base = SFT on the pretrain pool -> SFT baseline (Base + SFT
on the train experts) -> pivots scored with Base -> Stage I (Action) -> Vanilla, Hybrid and the
one-step baseline from Base, Vanilla and Hybrid from Action and from SFT -> summary.json + report.

Every configuration's row carries its whole bill (:mod:`adaroll.training.bill`), inherited
along its chain, and its learning curve on ``val`` at the same cost marks; the target is the
mean of Base->Vanilla's last three ``val`` evaluations.

Each step writes its outputs under the run directory and is skipped when they already exist,
so a killed run resumes where it stopped (the RL phases resume mid-phase).
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from adaroll.actions import PAPER_MATCHER, Action, ActionMatcher
from adaroll.checkpoints import CheckpointStore
from adaroll.config import (
    ConfigError,
    RunConfig,
    TrainConfig,
    dump_config,
)
from adaroll.envs import env_settings, get_suite, make_env_factory
from adaroll.envs import episodes_per_env as env_episodes_per_env
from adaroll.envs.base import ENVS, GUIEnv, TaskSpec, TaskSuite
from adaroll.evaluation import evaluate_split
from adaroll.experts import ExpertCollection, collect_experts, replay_on_device, save_collection
from adaroll.io import atomic_write_text, make_private_dir
from adaroll.policies import load_policy, make_policy
from adaroll.policies.base import Context, Policy
from adaroll.rollout.collector import Collector, RolloutCollector
from adaroll.seeding import derive_seed, seed_everything
from adaroll.snapshots.base import SNAPSHOT_BACKENDS, SupportsStateCopy
from adaroll.training.bill import Bill
from adaroll.training.pivot_scoring import PivotFileError, PivotSet, score_checkpoints
from adaroll.training.preflight import (
    Finding,
    checkpoint_finding,
    expert_findings,
    start_state_finding,
    verdict,
)
from adaroll.training.purposes import run_purposes
from adaroll.training.route_estimate import phase_estimator
from adaroll.training.run_identity import experiment_changes, record_machine, settings_changes
from adaroll.training.scheduler import SCHEDULERS
from adaroll.training.scheduler_base import interleave_templates
from adaroll.training.self_pool import SelfPivotPool
from adaroll.training.sft import train_sft
from adaroll.training.summary import (
    FINAL_SPLITS,
    RL_CONFIGS,
    RUN_FORMAT,
    cost_model,
    curve_point,
    keep_earlier_rows,
    read_metrics,
    summarise,
)
from adaroll.training.trainer import PhaseResult, Trainer

log = logging.getLogger("adaroll")

ONESTEP_ONLY = ("stage1", "onestep")
"""Phases that train on pivots alone: with an empty pivot set they have nothing to train on."""
REPLAYED = "train-replayed"
"""The demonstration "split" of the env steps that replayed clean train demonstrations on the
training device (``expert.device=clean``): billed to the configurations that use the checkpoints
(pivots, Stage I, Hybrid, OneStep), not to SFT, which imitates the recordings themselves."""


@dataclass
class Pipeline:
    cfg: RunConfig
    out: Path
    progress: bool = True
    say: Callable[[str], None] = print
    _suite: TaskSuite | None = field(default=None, init=False)
    _stores: dict[str, CheckpointStore] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        torch.set_num_threads(self.cfg.threads)

    # -- shared pieces --------------------------------------------------------------------------
    @property
    def suite(self) -> TaskSuite:
        if self._suite is None:
            self._suite = get_suite(
                self.cfg.env.name, dict(self.cfg.env.options), **self.cfg.env.suite_options
            )
        return self._suite

    def make_env(self) -> GUIEnv:
        return make_env_factory(self.cfg.env.name, **self.cfg.env.options)()

    def expert_suite(self) -> TaskSuite:
        if self.cfg.expert.kind == "remote":
            from adaroll.policies.remote import RemoteExpert

            return RemoteExpert.from_options(dict(self.cfg.expert.options)).wrap(self.suite)
        return self.suite

    def split(self, name: str) -> list[TaskSpec]:
        return self.suite.split(name)

    def eval_tasks(self) -> dict[str, list[TaskSpec]]:
        return {s: self.split(s) for s in FINAL_SPLITS}

    # -- steps ------------------------------------------------------------------------------------
    def experts(self, split: str) -> ExpertCollection | CheckpointStore:
        directory = self.out / "experts" / split
        if (directory / "experts.json").exists():
            return CheckpointStore.load(directory / "checkpoints.jsonl")
        make_private_dir(self.out)  # single-step commands (experts collect) start runs too
        collection = collect_experts(
            self.demo_env_factory(), self.expert_suite(), self.split(split), progress=self.progress
        )
        save_collection(collection, directory)
        self.say(
            f"experts[{split}]: {len(collection.verified)}/{len(collection.runs)} verified "
            f"({collection.verified_rate:.0%}), {len(collection.store)} checkpoints"
        )
        return collection.store

    def demo_env_factory(self) -> Callable[[], GUIEnv]:
        """Where the experts run: the training device, or the clean one (``expert.device``)."""
        if self.cfg.expert.device == "clean":
            return make_env_factory(
                self.cfg.env.name, **{**self.cfg.env.options, "device": "clean"}
            )
        return self.make_env

    def demonstrations(self, split: str) -> CheckpointStore:
        """The split's expert demonstrations as recorded (what SFT imitates)."""
        key = f"{split}/recorded"
        if key not in self._stores:
            self._stores[key] = self._load_store(split)
        return self._stores[key]

    def store(self, split: str) -> CheckpointStore:
        """The split's checkpoints on the training device: the demonstrations, or with
        ``expert.device=clean`` on a noisy device their action prefixes replayed there."""
        if split not in self._stores:
            store = self.demonstrations(split)
            if self.cfg.expert.device == "clean" and self._training_device() != "clean":
                store = self._replayed_demos(split, store)
            self._stores[split] = store
        return self._stores[split]

    def _training_device(self) -> str | None:
        env = self.make_env()
        try:
            return env.device_name
        finally:
            env.close()

    def _replayed_demos(self, split: str, demos: CheckpointStore) -> CheckpointStore:
        directory = self.out / "experts" / split
        path, bill = directory / "replayed.jsonl", directory / "replayed.json"
        if bill.exists():
            return CheckpointStore.load(path)
        store, steps = replay_on_device(demos, self.make_env, progress=self.progress)
        store.save(path)
        atomic_write_text(bill, json.dumps({"env_steps": steps, "checkpoints": len(store)}))
        self.say(
            f"experts[{split}]: clean demonstrations replayed on the training device, "
            f"{len(store)} checkpoints, {steps} env steps"
        )
        return store

    def _load_store(self, split: str) -> CheckpointStore:
        result = self.experts(split)
        store = result if isinstance(result, CheckpointStore) else result.store
        coverage = self.cfg.expert.train_coverage
        if split != "train" or coverage >= 1:
            return store
        tasks = sorted(store.task_ids())
        random.Random(derive_seed(self.cfg.seed, "expert-coverage")).shuffle(tasks)
        kept = set(tasks[: max(1, round(coverage * len(tasks)))])
        return CheckpointStore(c for c in store if c.task.id in kept)

    def sft_policy(self, name: str, start: Policy | None, split: str) -> Policy:
        directory = self.out / "policies" / name
        if (directory / "done").exists():
            return load_policy(self.cfg.policy, directory)
        seed_everything(self.cfg.seed, "sft", name)
        policy = start or make_policy(
            self.cfg.policy,
            seed=derive_seed(self.cfg.seed, "init"),
            hints=self.suite.policy_hints(),
        )
        examples = sft_examples(self.demonstrations(split), self.cfg.policy.history)
        stats = train_sft(
            policy,
            examples,
            epochs=self.cfg.sft.epochs,
            batch_size=self.cfg.sft.batch_size,
            lr=self.cfg.sft.lr,
            seed=derive_seed(self.cfg.seed, "sft", name),
            progress=self.progress,
        )
        policy.save(directory)
        atomic_write_text(
            directory / "done", json.dumps({"examples": len(examples), **_jsonable(stats)})
        )
        return policy

    def evaluate(self, name: str, policy: Policy) -> dict[str, float]:
        """``name``'s final evaluation on every split. Each split is kept as it finishes (it is
        seeded by its own name), so a stopped run resumes at the split it was in."""
        path = self.out / "evals" / f"{name}.json"
        if path.exists():
            self._drop_split_rows(path)  # a stop may have come between the row and this
            return json.loads(path.read_text())
        row: dict[str, float] = {}
        for split, tasks in self.eval_tasks().items():
            part = path.with_name(f"{name}.{split}.json")
            if part.exists():
                row |= json.loads(part.read_text())
                continue
            r = evaluate_split(
                policy,
                self.make_env,
                tasks,
                k=self.cfg.rl.eval.k,
                seed=derive_seed(self.cfg.seed, "final-eval", name, split),
            )
            done = {f"{split}_avg": r.avg, f"{split}_pass": r.pass_}
            atomic_write_text(part, json.dumps(done))
            row |= done
        atomic_write_text(path, json.dumps(row))
        self._drop_split_rows(path)
        return row

    @staticmethod
    def _drop_split_rows(path: Path) -> None:
        for part in path.parent.glob(f"{path.stem}.*.json"):
            part.unlink()

    def pivots(self, name: str, policy: Policy, phase: TrainConfig) -> PivotSet:
        path = self.out / "pivots" / f"{name}.json"
        if path.exists():
            try:
                return PivotSet.load(path)
            except PivotFileError as exc:  # derived data: the same policy and seed score it again
                self.say(f"{exc}; scoring the checkpoints again")
        collector = self.collector(policy)
        pivot_set = score_checkpoints(
            policy,
            collector,
            self.store("train"),
            phase.pivots,
            seed=derive_seed(self.cfg.seed, "pivots", name),
            matcher=phase.match.build(),
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        pivot_set.save(path)
        pc = phase.pivots
        gate = f"tau={pc.tau_dis}" if pc.threshold == "fixed" else f"task q={pc.task_quantile}"
        soft = f", temperature={pc.temperature}" if pc.temperature > 0 else ""
        self.say(
            f"pivots[{name}]: {pivot_set.count} of {len(pivot_set.scores)} checkpoints "
            f"({pc.scorer}, {gate}{soft})"
        )
        return pivot_set

    def collector(
        self,
        policy: Policy,
        matcher: ActionMatcher = PAPER_MATCHER,
        store: CheckpointStore | None = None,
    ) -> RolloutCollector:
        """The configured collector: this process (``rollout.backend: local``) or Ray workers,
        rewarding OneStep samples with ``matcher``, starting from ``store`` (default: the train
        experts' checkpoints)."""
        store = store if store is not None else self.store("train")
        per_env = env_episodes_per_env(self.cfg.env.name)
        if self.cfg.rollout.backend == "ray":
            from adaroll.rollout.distributed import EnvFactory
            from adaroll.rollout.ray_workers import RayCollector

            return RayCollector.from_config(
                self.cfg.rollout,
                policy,
                EnvFactory(self.cfg.env.name, dict(self.cfg.env.options)),
                store,
                self.cfg.env.snapshot_backend,
                matcher=matcher,
                env_episodes_per_env=per_env,
            )
        backend = SNAPSHOT_BACKENDS.get(self.cfg.env.snapshot_backend)(make_env=self.make_env)
        return Collector.from_config(
            self.cfg.rollout,
            policy,
            self.make_env,
            store,
            backend,
            matcher=matcher,
            env_episodes_per_env=per_env,
        )

    def episodes_per_env(self) -> int:
        """``rollout.episodes_per_env``, or the env kind's choice when unset."""
        chosen = self.cfg.rollout.episodes_per_env
        return chosen if chosen is not None else env_episodes_per_env(self.cfg.env.name)

    def rl_phase(
        self, name: str, start: Policy, phase: TrainConfig, *, resume: bool
    ) -> PhaseResult:
        pivot_set = self.pivots(f"{name}", start, phase) if phase.algorithm != "vanilla" else None
        if pivot_set is not None and pivot_set.count == 0 and phase.algorithm in ONESTEP_ONLY:
            return self._nothing_to_train(name, start, pivot_set)
        tasks = interleave_templates(self.split("train"))
        store, matcher = self.store("train"), phase.match.build()
        self_pool = None
        if pivot_set is not None and phase.pivots.self_pool and phase.algorithm == "hybrid":
            store = CheckpointStore(store)  # the pool grows this phase's copy only
            self_pool = SelfPivotPool(
                store,
                [t.id for t in tasks if not pivot_set.pivots.get(t.id)],
                phase.pivots,
                matcher,
            )
        collector = self.collector(start, matcher, store)
        try:
            scheduler = SCHEDULERS.get(phase.algorithm)(
                tasks=tasks,
                sched=phase.scheduler,
                grpo=phase.grpo,
                pivots=pivot_set.pivots if pivot_set else {},
                pivot_weights=pivot_set.weights if pivot_set else {},
                seed=derive_seed(self.cfg.seed, "scheduler", name),
                estimator=phase_estimator(phase, start, collector, self.store("train"), pivot_set),
            )
        except BaseException:
            collector.close()
            raise
        evals = {s: self.split(s) for s in {*phase.eval.splits, *phase.eval.final_splits}}
        trainer = Trainer(
            name,
            self.out / name,
            phase,
            start,
            scheduler,
            collector,
            self.make_env,
            evals,
            seed=self.cfg.seed,
            progress=self.progress,
            self_pool=self_pool,
        )
        try:
            result = trainer.train(resume=resume)
        finally:
            collector.close()
        if pivot_set is not None:
            result.final["pivots"] = pivot_set.count
            result.final["pivot_scoring_samples"] = pivot_set.policy_samples
        return result

    def _nothing_to_train(self, name: str, start: Policy, pivot_set: PivotSet) -> PhaseResult:
        """A one-step phase whose pivot set is empty has nothing to train on: it is not run (no
        iterations, no selection evaluations), hands on its start policy unchanged and says so
        in the run's log, its ``done.json`` and (``empty_pivots``) its summary row."""
        directory = self.out / name
        policy_dir = directory / "start"
        done = directory / "done.json"
        if not done.exists():
            directory.mkdir(parents=True, exist_ok=True)
            start.save(policy_dir)
            final = {
                "phase": name,
                "iteration": 0,
                **dict.fromkeys(
                    ("env_steps", "replay_steps", "selection_env_steps", "phase_env_steps"), 0
                ),
                "train_samples": 0,
                "policy_samples": 0,
                "optimizer_steps": 0,
                "stopped_by": "empty pivot set",
                "empty_pivots": True,
                "last_eval": None,
            }
            atomic_write_text(done, json.dumps(final, indent=2))
        self.say(
            f"{name}: the pivot set is empty (0 of {len(pivot_set.scores)} checkpoints): "
            "nothing to train on, the phase is skipped and hands on its start policy"
        )
        final = json.loads(done.read_text())
        final["pivots"], final["pivot_scoring_samples"] = 0, pivot_set.policy_samples
        return PhaseResult(policy_dir, final)

    # -- the whole run ------------------------------------------------------------------------------
    def check_names(self) -> None:
        """Fail before any work when a configured name is unknown (the error lists valid ones)."""
        from adaroll.algos.pivots import PIVOT_SCORERS
        from adaroll.policies import policy_class

        self.suite  # noqa: B018 - resolves the env name
        policy_class(self.cfg.policy.kind)
        SNAPSHOT_BACKENDS.get(self.cfg.env.snapshot_backend)
        self._check_state_copies()
        for phase in (self.cfg.stage1, self.cfg.rl):
            PIVOT_SCORERS.get(phase.pivots.scorer)
        self._check_decision_quotas()
        calibration = self.cfg.rl.scheduler.routing_calibration
        if calibration > len(self.split("train")):
            raise ConfigError(
                f"rl.scheduler.routing_calibration ({calibration}) is larger than the train "
                f"split ({len(self.split('train'))} tasks)"
            )

    def _check_decision_quotas(self) -> None:
        """A ``grpo.decision_quota`` that no batch of a phase the run trains can meet is a config
        error before any work: the largest batch follows from the train tasks' step limit."""
        phases = [("stage1", self.cfg.stage1)] if self.cfg.stage1.grpo.decision_quota else []
        if self.cfg.rl.grpo.decision_quota:
            algorithms = {a for n, (_, a) in RL_CONFIGS.items() if n in self.cfg.configurations}
            phases += [
                ("rl", self.cfg.rl.model_copy(update={"algorithm": a})) for a in sorted(algorithms)
            ]
        if not phases:
            return
        env = self.make_env()
        try:
            limit = 0
            for task in self.split("train"):
                env.reset(options={"task": task})
                limit = max(limit, env.max_steps)
        finally:
            env.close()
        for name, phase in phases:
            try:
                phase.check_decision_quota(limit)
            except ValueError as exc:
                raise ConfigError(f"{name}.{exc}") from None

    def _check_state_copies(self) -> None:
        """The ``memory`` backend needs envs that copy their state. Say so before experts and
        browsers run when the env's class cannot (a factory that decides per instance, like the
        gymnasium env's adapter, is checked at its first snapshot instead)."""
        factory = ENVS.get(self.cfg.env.name)
        if (
            self.cfg.env.snapshot_backend == "memory"
            and isinstance(factory, type)
            and not issubclass(factory, SupportsStateCopy)
        ):
            raise ConfigError(
                f"env.snapshot_backend: the {self.cfg.env.name} env cannot copy its "
                "state in memory; use replay (any env) or one docs/envs.md lists "
                "for it"
            )

    def run(self, *, resume: bool = True) -> dict[str, Any]:
        self.check_names()
        make_private_dir(self.out)  # 0700: configs, trajectories and policies are private
        self._check_format()
        saved = self.out / "config.yaml"
        if saved.exists() and (changed := experiment_changes(saved.read_text(), self.cfg)):
            raise ConfigError(
                f"{saved} holds a different config ({'; '.join(changed[:4])}"
                f"{'; ...' if len(changed) > 4 else ''}); use a new --out or the same config"
            )
        self._record_env_settings(started=saved.exists())
        if not self._finished() and (note := record_machine(self.out / "machines.jsonl")):
            self.say(note)
        atomic_write_text(saved, dump_config(self.cfg))
        atomic_write_text(self.out / "format.json", json.dumps({"format": RUN_FORMAT}))
        wanted = set(self.cfg.configurations)
        started = self.preflight_start_states()
        self.experts("pretrain")
        self.experts("train")
        self.store("train")  # replays clean demonstrations on the training device if configured
        self.preflight(started)
        expert_steps = {
            split: self.expert_env_steps(split) for split in ("pretrain", "train", REPLAYED)
        }
        self.sft_policy("base", None, "pretrain")
        bills = {"base": self.sft_bill("base").with_demos("pretrain")}
        results: dict[str, dict[str, Any]] = {}
        # saved policies, loaded afresh for every phase: training changes a policy in place
        policies = {"base": self.out / "policies" / "base"}
        if wanted & {"sft", "sft_vanilla", "sft_hybrid"}:
            self.sft_policy("sft", self._policy(policies["base"]), "train")
            policies["sft"] = self.out / "policies" / "sft"
            bills["sft"] = bills["base"].plus(self.sft_bill("sft")).with_demos("train")
        if wanted & {"action", "action_vanilla", "action_hybrid"}:
            base = self._policy(policies["base"])
            before = self._phase_start(bills["base"], "stage1", base, self.cfg.stage1)
            stage1 = self.rl_phase("stage1", base, self.cfg.stage1, resume=resume)
            policies["action"] = stage1.policy_dir
            bills["action"] = before.plus(Bill.of_phase(stage1.final))
            stage1_steps = stage1.final.get("optimizer_steps")
        for name in ("base", "sft", "action"):
            if name in policies and (name in wanted or name == "base"):
                results[name] = self._row(
                    self.evaluate(name, self._policy(policies[name])), bills[name], expert_steps
                )
        if "action" in results:
            results["action"]["optimizer_steps"] = stage1_steps
            if stage1.final.get("empty_pivots"):
                results["action"]["empty_pivots"] = True
        curves: dict[str, list[dict[str, Any]]] = {}
        for name, (start, algorithm) in RL_CONFIGS.items():
            if name not in wanted:
                continue
            phase = self.cfg.rl.model_copy(update={"algorithm": algorithm})
            policy = self._policy(policies[start])
            before = self._phase_start(bills[start], name, policy, phase)
            result = self.rl_phase(name, policy, phase, resume=resume)
            bill = before.plus(Bill.of_phase(result.final))
            results[name] = self._row(result.final["last_eval"] or {}, bill, expert_steps)
            results[name]["stopped_by"] = result.final["stopped_by"]
            results[name]["optimizer_steps"] = result.final.get("optimizer_steps")
            results[name]["iterations"] = result.final["iteration"]
            if result.final.get("empty_pivots"):
                results[name]["empty_pivots"] = True
            skipped = result.final.get("empty_pivots")  # not run: no evaluations, no curve
            curves[name] = [
                curve_point(p, before, expert_steps)
                for p in ([] if skipped else read_metrics(self.out / name))
                if p.get("kind") == "eval"
            ]
        keep_earlier_rows(self.out / "summary.json", results, curves)
        summary = summarise(results, curves)
        summary["expert_env_steps"] = expert_steps
        summary["cost_model"] = cost_model(self.out, self.cfg.rl, summary, len(self.split("train")))
        summary["purposes"] = run_purposes(self.out, list(summary["configurations"]))
        atomic_write_text(self.out / "summary.json", json.dumps(summary, indent=2))
        return summary

    def preflight_start_states(self) -> list[Finding]:
        """The start-state check (``checks.start_states``), made before the experts run."""
        if not self.cfg.checks.start_states:
            return []
        found = start_state_finding(self.make_env, self.split("train"))
        return [found] if found is not None else []

    def preflight(self, found: list[Finding]) -> None:
        """Stop before training when the run cannot mean anything (:mod:`.preflight`): the
        experts of a split verify nothing (or less than ``checks.min_verified_rate``), phases on
        pivots have no checkpoint, or the seeds do not change the start state (``found``)."""
        summaries = {
            split: json.loads((self.out / "experts" / split / "experts.json").read_text())
            for split in ("pretrain", "train")
        }
        findings = [*found, *expert_findings(summaries, self.cfg.checks.min_verified_rate)]
        pivots = checkpoint_finding(len(self.store("train")), self.cfg.configurations)
        findings += [pivots] if pivots is not None else []
        verdict(findings, stop=self.cfg.checks.stop, say=self.say)

    def _record_env_settings(self, *, started: bool) -> None:
        """``env.json``: the env's settings with every default resolved (:func:`env_settings`)
        as the run started. A run with work left resumes only under the same settings: a default
        changed in the code since then would mix two envs in one run. A finished run is only read
        again (re-analysed), so it passes with a note; a run from before settings were recorded
        has none to compare."""
        path = self.out / "env.json"
        now = env_settings(self.cfg.env.name, dict(self.cfg.env.options))
        if not path.exists():
            if not started:
                atomic_write_text(path, json.dumps(now, indent=2))
            return
        try:
            then = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"{path} is not readable ({exc}): the env settings this run started "
                "with are unknown; restore the file, or rerun with --fresh or a new --out"
            ) from None
        changed = settings_changes(then, now)
        if not changed:
            return
        listed = "; ".join(changed[:4]) + ("; ..." if len(changed) > 4 else "")
        if self._finished():
            self.say(
                f"note: the {self.cfg.env.name} env's settings changed since {self.out} was run "
                f"({listed}); it is finished, so its results are only read"
            )
            return
        raise ConfigError(
            f"{path}: the {self.cfg.env.name} env's settings changed since this run "
            f"started ({listed}): an env default in the code, or the browser, changed; "
            "finish it with the code and browser it started with, or rerun it with "
            "--fresh or a new --out"
        )

    def _finished(self) -> bool:
        """Whether every configuration of the config has its row in ``summary.json``."""
        path = self.out / "summary.json"
        try:
            rows = json.loads(path.read_text()).get("configurations", {})
        except (OSError, ValueError):
            return False
        return set(self.cfg.configurations) <= set(rows)

    def _policy(self, directory: Path) -> Policy:
        return load_policy(self.cfg.policy, directory)

    def _phase_start(self, start: Bill, name: str, policy: Policy, phase: TrainConfig) -> Bill:
        """What a phase inherits before its first iteration: its start policy's bill and, for
        phases on pivots, the train demonstrations and the samples that scored the pivots (scored
        here with the start policy; the phase reads the same pivot file)."""
        if phase.algorithm == "vanilla":
            return start
        scoring = self.pivots(name, policy, phase).policy_samples
        return start.with_demos("train", REPLAYED).plus(
            Bill(policy_samples=scoring, scoring_samples=scoring)
        )

    def expert_env_steps(self, split: str) -> int:
        """Env steps of the split's expert runs (verified or not: every run was paid for); for
        :data:`REPLAYED`, of replaying the clean train demonstrations on the training device
        (0 when that was not done)."""
        if split == REPLAYED:
            path = self.out / "experts" / "train" / "replayed.json"
            return int(json.loads(path.read_text())["env_steps"]) if path.exists() else 0
        return int(
            json.loads((self.out / "experts" / split / "experts.json").read_text())["env_steps"]
        )

    def sft_bill(self, name: str) -> Bill:
        """A behaviour-cloning step's own bill: demonstration steps x epochs training samples."""
        done = json.loads((self.out / "policies" / name / "done").read_text())
        return Bill(training_samples=int(done["examples"]) * int(done["epochs"]))

    def _check_format(self) -> None:
        marker = self.out / "format.json"
        found = json.loads(marker.read_text()).get("format") if marker.exists() else 1
        if found != RUN_FORMAT and (self.out / "config.yaml").exists():
            raise ConfigError(
                f"{self.out} holds a run of accounting format {found}, not {RUN_FORMAT}: it does not "
                "bill demonstrations, selection evaluations, replays and pivot scoring, so its "
                "numbers cannot be mixed with new ones; rerun it with --fresh or a new --out"
            )

    @staticmethod
    def _row(metrics: dict[str, Any], bill: Bill, expert_steps: dict[str, int]) -> dict[str, Any]:
        scores = {
            f"{split}_{kind}4": metrics.get(f"{split}_{kind}")
            for split in FINAL_SPLITS
            for kind in ("avg", "pass")
        }
        return {**bill.row(expert_steps), **scores}


def sft_examples(store: CheckpointStore, history: int) -> list[tuple[Context, Action]]:
    return [
        (Context.at(c.instruction, c.observation, c.history, history), c.expert_action)
        for c in store
    ]


def _jsonable(stats: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in stats.items() if isinstance(v, (int, float, str, list))}
