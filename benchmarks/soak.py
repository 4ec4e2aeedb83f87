"""Memory over long runs: does a web training run with CRIU branches stay bounded?

Three subcommands (all re-runnable; ``sample`` appends, ``report`` reads whatever is there):

* ``sample --pid PID --csv FILE [--every 30]``: every ``every`` seconds, one row per live
  process of PID's tree (the controller, its isolated browsers and CRIU branches - restored
  inits are re-parented to the controller -, the restore launcher, criu) with its RSS and PSS
  (``/proc/PID/smaps_rollup``), its role and the pid-namespace init it belongs to. Runs until
  PID exits. Long format, so a sampler restarted after a crash simply goes on appending.
* ``report --csv FILE [--plot PNG]``: per sample, the controller's PSS, the browsers' total PSS,
  the number of live browsers (pid-namespace inits) and PSS per live browser; prints the means
  of the first and last quarter-hour, the peak and the growth per hour (least squares, over the
  whole run and after its first fifth, the warm-up), and draws the plot.
* ``--smoke``: the CI check. Saves one CRIU snapshot of a web env, then restores and closes
  ``--branches`` branches (``--live`` at a time) and compares, between the first and the last
  fifth of the rounds, private memory (and PSS) per live branch and the controller's PSS; fails
  (exit 1) when either grows by more than its bound (``--branch-growth`` of the first rounds'
  per-branch private memory,
  ``--controller-growth-mb``). Its last line is JSON. Needs root, Chromium and CRIU.

The long run in docs/RELIABILITY.md ("Memory over a long run") was measured with ``sample``
alongside ``adaroll train hybrid`` (the command is in that section); its plot comes from
``report``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

FIELDS = ("t", "pid", "role", "ns_init", "rss_kb", "pss_kb")


# -- reading /proc ----------------------------------------------------------------------------


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def memory_kb(pid: int) -> tuple[int, int] | None:
    """(RSS, PSS) in kB from ``smaps_rollup``; None when the process is gone."""
    rss = pss = None
    for line in _read(f"/proc/{pid}/smaps_rollup").splitlines():
        if line.startswith("Rss:"):
            rss = int(line.split()[1])
        elif line.startswith("Pss:"):
            pss = int(line.split()[1])
    return None if rss is None or pss is None else (rss, pss)


def _parents() -> dict[int, int]:
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _read(f"/proc/{entry}/stat")
            if stat:
                out[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    return out


def tree(root: int) -> list[int]:
    """``root`` and every live descendant."""
    children: dict[int, list[int]] = {}
    for pid, parent in _parents().items():
        children.setdefault(parent, []).append(pid)
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def _ns_init(pid: int, inits: dict[str, int]) -> int:
    """The host pid of ``pid``'s pid-namespace init (0: the host's namespace)."""
    try:
        return inits.get(os.readlink(f"/proc/{pid}/ns/pid"), 0)
    except OSError:
        return 0


def role(pid: int, root: int) -> str:
    if pid == root:
        return "controller"
    cmd = _read(f"/proc/{pid}/cmdline").replace("\0", " ")
    for name, marker in (
        ("browser", "chrom"),
        ("browser", "tini"),
        ("criu", "criu"),
        ("launcher", "restore_launcher"),
        ("janitor", "_janitor"),
    ):
        if marker in cmd:
            return name
    return "other"


def sample_once(root: int, t: float) -> list[dict[str, object]]:
    pids = tree(root)
    host_ns = os.readlink("/proc/self/ns/pid")
    inits = {}
    for pid in pids:  # a namespace init is pid 1 of its namespace: NSpid's last field
        status = _read(f"/proc/{pid}/status")
        nspid = next(
            (line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:")), []
        )
        if len(nspid) > 1 and nspid[-1] == "1":
            try:
                inits[os.readlink(f"/proc/{pid}/ns/pid")] = pid
            except OSError:
                pass
    inits.pop(host_ns, None)
    rows = []
    for pid in pids:
        mem = memory_kb(pid)
        if mem is None:
            continue
        rows.append(
            {
                "t": round(t, 1),
                "pid": pid,
                "role": role(pid, root),
                "ns_init": _ns_init(pid, inits),
                "rss_kb": mem[0],
                "pss_kb": mem[1],
            }
        )
    return rows


def sample(pid: int, csv_path: Path, every: float) -> None:
    new = not csv_path.exists()
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    start = time.time()
    with csv_path.open("a", newline="") as f:
        writer = csv.DictWriter(f, FIELDS)
        if new:
            writer.writeheader()
        while os.path.exists(f"/proc/{pid}"):
            writer.writerows(sample_once(pid, time.time()))
            f.flush()
            time.sleep(max(0.0, every - (time.time() - start) % every))


# -- the report --------------------------------------------------------------------------------


def series(csv_path: Path) -> list[dict[str, float]]:
    """One point per sample time: controller PSS, browsers' PSS, live browsers, PSS per browser."""
    by_t: dict[float, list[dict[str, str]]] = {}
    with csv_path.open() as f:
        for row in csv.DictReader(f):
            by_t.setdefault(float(row["t"]), []).append(row)
    points = []
    t0 = min(by_t) if by_t else 0.0
    for t in sorted(by_t):
        rows = by_t[t]
        controller = sum(int(r["pss_kb"]) for r in rows if r["role"] == "controller")
        browser_rows = [r for r in rows if r["role"] == "browser"]
        browsers = len({r["ns_init"] for r in browser_rows if r["ns_init"] != "0"})
        pool = sum(int(r["pss_kb"]) for r in browser_rows)
        total = sum(int(r["pss_kb"]) for r in rows)
        points.append(
            {
                "hours": (t - t0) / 3600,
                "controller_mb": controller / 1024,
                "pool_mb": pool / 1024,
                "browsers": browsers,
                "per_browser_mb": pool / 1024 / browsers if browsers else float("nan"),
                "total_mb": total / 1024,
            }
        )
    return points


def _slope(xs: list[float], ys: list[float]) -> float:
    pairs = [(x, y) for x, y in zip(xs, ys, strict=True) if y == y]
    if len(pairs) < 2:
        return float("nan")
    mx = sum(x for x, _ in pairs) / len(pairs)
    my = sum(y for _, y in pairs) / len(pairs)
    var = sum((x - mx) ** 2 for x, _ in pairs)
    return sum((x - mx) * (y - my) for x, y in pairs) / var if var else float("nan")


def report(csv_path: Path, plot: Path | None) -> str:
    points = series(csv_path)
    if not points:
        return f"{csv_path}: no samples yet"
    hours = [p["hours"] for p in points]
    lines = [f"{csv_path}: {len(points)} samples over {hours[-1]:.2f} h"]
    window = min(0.25, hours[-1] / 4)  # first and last quarter-hour (or quarter of the run)
    for key, label in (
        ("controller_mb", "controller PSS (MB)"),
        ("pool_mb", "browsers' PSS (MB)"),
        ("browsers", "live browsers"),
        ("per_browser_mb", "PSS per live browser (MB)"),
        ("total_mb", "whole tree PSS (MB)"),
    ):
        first = [p[key] for p in points if p["hours"] <= window and p[key] == p[key]]
        last = [p[key] for p in points if p["hours"] >= hours[-1] - window and p[key] == p[key]]
        peak = max((p[key] for p in points if p[key] == p[key]), default=float("nan"))
        mean = lambda v: sum(v) / len(v) if v else float("nan")  # noqa: E731
        later = [p for p in points if p["hours"] >= hours[-1] / 5]  # past the warm-up
        lines.append(
            f"  {label:28s} first {mean(first):8.1f}  last {mean(last):8.1f}  peak {peak:8.1f}  "
            f"slope {_slope(hours, [p[key] for p in points]):+8.2f}/h  after the first fifth "
            f"{_slope([p['hours'] for p in later], [p[key] for p in later]):+8.2f}/h"
        )
    if plot is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
        axes[0].plot(hours, [p["controller_mb"] for p in points], label="controller PSS")
        axes[0].plot(hours, [p["pool_mb"] for p in points], label="browsers' PSS (all live)")
        axes[0].plot(hours, [p["total_mb"] for p in points], label="whole tree PSS")
        axes[0].set_ylabel("MB")
        axes[0].legend(loc="upper left", fontsize=8)
        axes[1].plot(
            hours, [p["per_browser_mb"] for p in points], label="PSS per live browser", color="C3"
        )
        ax2 = axes[1].twinx()
        ax2.plot(
            hours, [p["browsers"] for p in points], label="live browsers", color="C7", alpha=0.5
        )
        ax2.set_ylabel("live browsers")
        axes[1].set_ylabel("MB")
        axes[1].set_xlabel("hours")
        axes[1].legend(loc="upper left", fontsize=8)
        fig.suptitle("web training run with CRIU branches: memory over time")
        fig.tight_layout()
        plot.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(plot, dpi=100)
        lines.append(f"  plot: {plot}")
    return "\n".join(lines)


# -- the smoke check ---------------------------------------------------------------------------


def pss_mb(pids: list[int]) -> float:
    return sum((memory_kb(p) or (0, 0))[1] for p in pids) / 1024


def private_mb(pids: list[int]) -> float:
    """Private (unshared) memory of ``pids``: what a leak grows. Unlike PSS it does not move
    when other processes that share a branch's pages (any other Chromium) start or exit."""
    total = 0
    for pid in pids:
        for line in _read(f"/proc/{pid}/smaps_rollup").splitlines():
            if line.startswith(("Private_Clean:", "Private_Dirty:")):
                total += int(line.split()[1])
    return total / 1024


def smoke(branches: int, live: int, task: str) -> list[tuple[float, float, float]]:
    """Restore and close ``branches`` CRIU branches of one snapshot, ``live`` at a time; per
    round, (mean PSS per live branch, controller PSS, mean private memory per live branch),
    in MB."""
    import gc

    from adaroll.envs.web.env import WebEnv
    from adaroll.snapshots.criu import CriuSnapshots

    env = WebEnv()
    snaps = CriuSnapshots(max_branches=live)
    rounds = []
    try:
        env.reset(options={"task": task})
        ref = snaps.save(env, ())
        env.close()
        for _ in range(max(1, branches // live)):
            envs = [snaps.restore(ref) for _ in range(live)]
            for branch in envs:
                branch.observe()
            trees = [tree(branch.browser.pid) for branch in envs]
            per_branch = [pss_mb(pids) for pids in trees]
            private = [private_mb(pids) for pids in trees]
            for branch in envs:
                branch.close()
            gc.collect()
            rounds.append(
                (
                    sum(per_branch) / len(per_branch),
                    pss_mb([os.getpid()]),
                    sum(private) / len(private),
                )
            )
    finally:
        env.close()
        snaps.close()
    return rounds


def verdict(
    rounds: list[tuple[float, float, float]], branch_growth: float, controller_growth_mb: float
) -> dict[str, object]:
    """Compare the first and the last fifth of the rounds: private memory per live branch may
    grow by at most ``branch_growth`` (a fraction; PSS is reported beside it, but moves with
    whatever else shares the branches' pages), the controller's PSS by ``controller_growth_mb``."""
    k = max(1, len(rounds) // 5)
    mean = lambda values: sum(values) / len(values)  # noqa: E731
    first_branch, last_branch = mean([r[0] for r in rounds[:k]]), mean([r[0] for r in rounds[-k:]])
    first_ctl, last_ctl = mean([r[1] for r in rounds[:k]]), mean([r[1] for r in rounds[-k:]])
    first_own, last_own = mean([r[2] for r in rounds[:k]]), mean([r[2] for r in rounds[-k:]])
    return {
        "rounds": len(rounds),
        "branch_pss_mb_first": round(first_branch, 2),
        "branch_pss_mb_last": round(last_branch, 2),
        "controller_pss_mb_first": round(first_ctl, 2),
        "controller_pss_mb_last": round(last_ctl, 2),
        "branch_private_mb_first": round(first_own, 2),
        "branch_private_mb_last": round(last_own, 2),
        "branch_ok": last_own <= first_own * (1 + branch_growth),
        "controller_ok": last_ctl - first_ctl <= controller_growth_mb,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", choices=("sample", "report"))
    parser.add_argument(
        "--smoke", action="store_true", help="the CI check (see the module docstring)"
    )
    parser.add_argument("--pid", type=int, help="sample: the controller's pid")
    parser.add_argument("--csv", type=Path, help="sample/report: the samples file")
    parser.add_argument("--every", type=float, default=30.0, help="sample: seconds between samples")
    parser.add_argument("--plot", type=Path, help="report: write the plot here")
    parser.add_argument("--branches", type=int, default=24, help="smoke: branches in all")
    parser.add_argument("--live", type=int, default=3, help="smoke: branches alive at a time")
    parser.add_argument(
        "--branch-growth",
        type=float,
        default=0.15,
        help="smoke: allowed growth of private memory per live branch (fraction)",
    )
    parser.add_argument(
        "--controller-growth-mb",
        type=float,
        default=10.0,
        help="smoke: allowed growth of the controller's PSS (MB)",
    )
    parser.add_argument(
        "--task", default="web:book-flight-nodelay#0", help="smoke: the snapshotted task"
    )
    args = parser.parse_args(argv)
    if args.smoke:
        rounds = smoke(args.branches, args.live, args.task)
        result = verdict(rounds, args.branch_growth, args.controller_growth_mb)
        print(
            f"{args.branches} branches restored and closed, {args.live} live at a time: private "
            f"memory per live branch {result['branch_private_mb_first']} -> "
            f"{result['branch_private_mb_last']} MB (bound +{args.branch_growth:.0%}; PSS "
            f"{result['branch_pss_mb_first']} -> {result['branch_pss_mb_last']} MB), controller "
            f"{result['controller_pss_mb_first']} -> "
            f"{result['controller_pss_mb_last']} MB (bound +{args.controller_growth_mb:g} MB)"
        )
        print(json.dumps({"branches": args.branches, "live": args.live, **result}))
        return 0 if result["branch_ok"] and result["controller_ok"] else 1
    if args.command == "sample":
        if args.pid is None or args.csv is None:
            parser.error("sample needs --pid and --csv")
        sample(args.pid, args.csv, args.every)
        return 0
    if args.command == "report":
        if args.csv is None:
            parser.error("report needs --csv")
        print(report(args.csv, args.plot))
        return 0
    parser.error("give sample, report or --smoke")
    return 2


if __name__ == "__main__":
    sys.exit(main())
