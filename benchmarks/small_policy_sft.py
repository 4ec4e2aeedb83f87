"""SFT of the small policy on expert steps of the mobile ``pretrain`` split, then its success
on the ``train`` and ``heldout`` splits by rolling it out in the env (the pipeline's *Base*).

    .venv/bin/python benchmarks/small_policy_sft.py [--pretrain 200] [--epochs 2,4,6]
        [--dim 64] [--lr 3e-3] [--batch-size 64] [--k 4] [--threads 2] [--seed 0] [--smoke]

Experts run on the pretrain tasks (verified successes only) and on the train tasks (for step
accuracy: share of expert steps where the greedy action matches the expert's, exact typed
text). After each epoch listed in ``--epochs`` (one training run, evaluated along the way) it
prints: mean NLL, step accuracy on pretrain (fit) and train (generalisation to new instances)
expert steps, Avg@k / Pass@k of sampled rollouts (temperature 1, as the pipeline evaluates)
on train and heldout, and greedy success. ``--smoke`` (CI) trains on 8 pretrain tasks for 1 epoch
and evaluates Avg@2 / Pass@2 on 2 train and 2 heldout tasks. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from typing import Any

import torch

from adaroll.actions import Action
from adaroll.envs import get_suite, make_env_factory
from adaroll.envs.base import TaskSpec
from adaroll.evaluation import evaluate_split
from adaroll.experts import collect_experts
from adaroll.policies.base import Context, Policy, SampledAction
from adaroll.policies.small import SmallPolicy, SmallPolicyConfig
from adaroll.training.sft import step_accuracy, train_sft


class Greedy(Policy):
    """A view of a policy that always acts greedily (for greedy success rates)."""

    def __init__(self, policy: Policy) -> None:
        self.inner = policy

    def sample(
        self, contexts: Sequence[Context], n: int, *, greedy: bool = False
    ) -> list[list[SampledAction]]:
        return self.inner.sample(contexts, n, greedy=True)

    def decision_log_probs(self, contexts: Any, samples: Any) -> Any:
        return self.inner.decision_log_probs(contexts, samples)

    def parameters(self) -> Any:
        return self.inner.parameters()

    def state_dict(self) -> Any:
        return self.inner.state_dict()

    def load_state_dict(self, state: Any) -> None:
        self.inner.load_state_dict(state)

    def save(self, path: Any) -> None:
        self.inner.save(path)

    @classmethod
    def load(cls, path: Any) -> Policy:
        raise NotImplementedError

    def reseed(self, seed: int) -> None:
        self.inner.reseed(seed)


def examples_of(
    make_env: Any, suite: Any, tasks: list[TaskSpec], history: int
) -> tuple[list[tuple[Context, Action]], float]:
    collection = collect_experts(make_env, suite, tasks, progress=False)
    out = []
    for run in collection.verified:
        for t, (obs, action) in enumerate(zip(run.observations, run.actions, strict=True)):
            window = tuple(run.actions[max(0, t - history) : t]) if history > 0 else ()
            out.append((Context(run.instruction, obs, window), action))
    return out, collection.verified_rate


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--env", default="mobile")
    ap.add_argument("--pretrain", type=int, default=200, help="pretrain tasks (suite n_pretrain)")
    ap.add_argument("--epochs", default="2,4,6", help="epochs at which to evaluate (one run)")
    ap.add_argument("--dim", type=int, default=SmallPolicyConfig.dim)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--history", type=int, default=4)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--options", default="{}", help="extra SmallPolicyConfig fields as JSON")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="8 pretrain tasks, 1 epoch, k=2 on 2 train + 2 heldout tasks (CI)",
    )
    args = ap.parse_args()
    if args.smoke:
        args.pretrain, args.epochs, args.k = 8, "1", 2
    torch.set_num_threads(args.threads)
    marks = sorted({int(e) for e in args.epochs.split(",")})

    sizes = {"n_train": 2, "n_heldout": 2} if args.smoke else {}
    suite = (
        get_suite(args.env, n_pretrain=args.pretrain, **sizes)
        if args.env == "mobile"
        else get_suite(args.env)
    )
    make_env = make_env_factory(args.env)
    app_names: tuple[str, ...] = ()
    if args.env == "mobile":
        from adaroll.envs.mobile.apps import APP_NAMES

        app_names = tuple(APP_NAMES)
    t0 = time.perf_counter()
    pretrain, rate = examples_of(make_env, suite, suite.split("pretrain"), args.history)
    train_steps, _ = examples_of(make_env, suite, suite.split("train"), args.history)
    print(
        f"experts: {len(pretrain)} pretrain steps (verified rate {rate:.0%}), "
        f"{len(train_steps)} train steps, {time.perf_counter() - t0:.1f}s"
    )

    cfg = SmallPolicyConfig(
        dim=args.dim,
        history_len=args.history,
        app_names=app_names,
        seed=args.seed,
        **json.loads(args.options),
    )
    policy = SmallPolicy(cfg)
    n_params = sum(p.numel() for p in policy.parameters())
    print(f"policy: dim {cfg.dim}, {n_params / 1e6:.2f}M parameters, kinds {','.join(cfg.kinds)}")
    splits = {name: suite.split(name) for name in ("train", "heldout")}
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    train_seconds = 0.0
    last = [started]

    def evaluate(epoch: int, stats: dict[str, Any]) -> None:
        nonlocal train_seconds
        train_seconds += time.perf_counter() - last[0]
        if epoch not in marks:
            last[0] = time.perf_counter()
            return
        t = time.perf_counter()
        row: dict[str, Any] = {
            "epoch": epoch,
            "loss": round(stats["epoch_loss"][-1], 4),
            "train_seconds": round(train_seconds, 1),
            "step_acc_pretrain": round(step_accuracy(policy, pretrain), 4),
            "step_acc_train": round(step_accuracy(policy, train_steps), 4),
        }
        for name, tasks in splits.items():
            r = evaluate_split(
                policy, make_env, tasks, k=args.k, history_window=args.history, seed=args.seed
            )
            g = evaluate_split(
                Greedy(policy), make_env, tasks, k=1, history_window=args.history, seed=args.seed
            )
            row[f"{name}_avg{args.k}"] = round(r.avg, 4)
            row[f"{name}_pass{args.k}"] = round(r.pass_, 4)
            row[f"{name}_greedy"] = round(g.avg, 4)
        row["eval_seconds"] = round(time.perf_counter() - t, 1)
        rows.append(row)
        print(" | ".join(f"{k} {v}" for k, v in row.items()), flush=True)
        last[0] = time.perf_counter()

    stats = train_sft(
        policy,
        pretrain,
        epochs=max(marks),
        batch_size=args.batch_size,
        lr=args.lr,
        seed=args.seed,
        progress=False,
        on_epoch=evaluate,
    )
    print(
        json.dumps(
            {
                "benchmark": "small_policy_sft",
                "env": args.env,
                "pretrain_tasks": args.pretrain,
                "pretrain_steps": len(pretrain),
                "train_steps": len(train_steps),
                "k": args.k,
                **{f"{name}_tasks": len(tasks) for name, tasks in splits.items()},
                "skipped": stats["skipped"],
                "dim": cfg.dim,
                "lr": args.lr,
                "batch_size": args.batch_size,
                "threads": args.threads,
                "rows": rows,
            }
        )
    )


if __name__ == "__main__":
    main()
