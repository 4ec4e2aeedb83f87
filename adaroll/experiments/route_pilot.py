"""The routing-estimate pilot (issue 40, items 3 and 7): before any RL run with the options,
how well the zero-env-cost estimate routes, and what the cost model predicts for each option.

For one profile and seed, on the **train** split only, with Base (built as ``adaroll pilot``
builds it, in the same directory, so both pilots share experts, Base and pivots):

1. the cost pilot (:func:`~adaroll.experiments.pilot.run_pilot`): the 4-probe routing pass,
   pivots, Suffix groups and the cost model's inputs;
2. the reference: ``REFERENCE`` root probes per task, from a seed of their own;
3. the estimates: per task the product of its expert checkpoints' match shares (``match``, from
   the pivot scoring's samples) and of ``pi(a^E | c)`` (``likelihood``);
4. how they rank and route: Spearman's rank correlation of each with the reference success, and
   how often each puts a task in the reference's mode (tau_low / tau_high of the RL phase) - the
   4-probe pass, and the estimate as the scheduler would route with ``routing_calibration`` c
   (the first c tasks of the round robin routed by their probes, gamma fitted on them, the
   others by the calibrated estimate), for several c;
5. the predictions: S(N) of every option variant of the horizon experiment at N updates, from
   the cost model's terms (:mod:`adaroll.algos.cost_model`) fed with what 1-4 measured.

Val and held-out tasks are never touched. Writes ``ROOT/PROFILE/seedK/route_pilot.json``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from adaroll.algos import cost_model as cm
from adaroll.algos.route_estimate import calibrated, fit_gamma, spearman
from adaroll.experiments.pilot import pilot_base, run_pilot
from adaroll.experiments.variants import LEARNING_CALIBRATION, LEARNING_ESTIMATE
from adaroll.io import atomic_write_text
from adaroll.rollout.jobs import Job
from adaroll.routes import ROUTED, Route, StartKind
from adaroll.seeding import derive_seed
from adaroll.training.route_estimate import (
    RouteEstimator,
    expert_checkpoints,
    likelihood_factors,
    match_factors,
)
from adaroll.training.scheduler import route_for
from adaroll.training.scheduler_base import interleave_templates

REFERENCE = 16
"""Root probes per task that measure its success for the reference."""
CALIBRATIONS = (0, 4, 8, 16)
"""Calibration sizes (tasks probed first) the pilot routes with."""
ESTIMATES = ("match", "likelihood")
N_PREDICTED = 30
"""Updating iterations at which the options' savings are predicted (the horizon sweep's)."""
REEVAL_MARGIN = 0.1
"""``scheduler.reeval_margin``'s default: a Local task this close to tau_low is re-probed."""


def routing_agreement(
    order: Sequence[str],
    raw: Mapping[str, float],
    probes: Mapping[str, int],
    reference: Mapping[str, float],
    *,
    n_probes: int,
    calibration: int,
    tau: tuple[float, float],
) -> tuple[float, dict[str, Route], float]:
    """How the scheduler would route with the estimate ``raw`` and ``calibration`` tasks (the
    first of ``order``, routed by their probes, ``probes[t]`` successes of ``n_probes``): the
    share of tasks put in their reference mode, the modes, and the fitted gamma."""
    probed = list(order[:calibration])
    gamma = fit_gamma([(raw[t], probes[t], n_probes) for t in probed]) if probed else 1.0
    modes = {
        t: route_for(probes[t] / n_probes if t in probed else calibrated(raw[t], gamma), *tau)
        for t in order
    }
    agree = sum(modes[t] == route_for(reference[t], *tau) for t in order) / len(order)
    return agree, modes, gamma


def run_route_pilot(
    profile: str, seed: int, root: Path, *, say: Callable[[str], None] = print
) -> dict[str, Any]:
    """Measure the estimates against the reference and predict every option; writes and
    returns ``ROOT/PROFILE/seedK/route_pilot.json``."""
    cost = _cost_pilot(profile, seed, root, say)
    cfg, out, pipe, base = pilot_base(profile, seed, root, say=say)
    sched = cfg.rl.scheduler
    tasks = interleave_templates(pipe.split("train"))  # the scheduler's round robin order
    order = [t.id for t in tasks]
    pivot_set = pipe.pivots("pilot", base, cfg.rl)
    measured = _measure(out, pipe, base, cfg, tasks, pivot_set, seed)
    reference, raw = measured["reference"], measured["raw"]
    probes = {t: int(cost["probe_successes"][t]) for t in order}
    tau = (sched.tau_low, sched.tau_high)
    ref = [reference[t] for t in order]
    n_probes = sched.routing_probes
    result: dict[str, Any] = {
        "profile": profile,
        "seed": seed,
        "train_tasks": len(order),
        "reference_probes": REFERENCE,
        "routing_probes": n_probes,
        "thresholds": list(tau),
        "reference_env_steps": measured["env_steps"],
        "reference_modes": _counts(route_for(p, *tau) for p in ref),
        "spearman": {
            "probes": spearman([probes[t] for t in order], ref),
            **{kind: spearman([raw[kind][t] for t in order], ref) for kind in ESTIMATES},
        },
        "mode_agreement": {
            "probes": sum(
                route_for(probes[t] / n_probes, *tau) == route_for(reference[t], *tau)
                for t in order
            )
            / len(order)
        },
        "calibration": {},
        "tasks": {
            t: {
                "reference": reference[t],
                "probes": probes[t],
                **{kind: raw[kind][t] for kind in ESTIMATES},
            }
            for t in order
        },
    }
    for kind in ESTIMATES:
        for c in CALIBRATIONS:
            agree, modes, gamma = routing_agreement(
                order, raw[kind], probes, reference, n_probes=n_probes, calibration=c, tau=tau
            )
            result["mode_agreement"][f"{kind}-{c}"] = agree
            result["calibration"][f"{kind}-{c}"] = {
                "gamma": gamma,
                "modes": _counts(modes.values()),
            }
    result["estimate"] = LEARNING_ESTIMATE
    result["predictions"] = predict_options(cost, result, raw, order, pivot_set.pivots)
    # the cost pilot the predictions start from (its Base is this pilot's)
    result["cost_pilot"] = {k: v for k, v in cost.items() if k != "probe_successes"}
    atomic_write_text(out / "route_pilot.json", json.dumps(result, indent=2))
    return result


def _cost_pilot(profile: str, seed: int, root: Path, say: Callable[[str], None]) -> dict[str, Any]:
    """The cost pilot this routing pilot starts from: its ``pilot.json`` when it already holds
    what the predictions read, else run (:func:`~adaroll.experiments.pilot.run_pilot`)."""
    path = Path(root) / profile / f"seed{seed}" / "pilot.json"
    if path.exists():
        saved: dict[str, Any] = json.loads(path.read_text())
        if "hybrid_inputs" in saved and "probe_successes" in saved:
            return saved
    return run_pilot(profile, seed, root, say=say)


def _measure(
    out: Path, pipe: Any, base: Any, cfg: Any, tasks: Sequence[Any], pivot_set: Any, seed: int
) -> dict[str, Any]:
    """The expensive part, kept in ``route_pilot.json`` and reused when it is there: each task's
    reference success (``REFERENCE`` root probes) and raw estimates."""
    path = out / "route_pilot.json"
    if path.exists():
        saved = json.loads(path.read_text())
        if saved.get("reference_probes") == REFERENCE and saved.get("tasks"):
            rows = saved["tasks"]
            return {
                "reference": {t: r["reference"] for t, r in rows.items()},
                "raw": {k: {t: r[k] for t, r in rows.items()} for k in ESTIMATES},
                "env_steps": saved["reference_env_steps"],
            }
    store = pipe.store("train")
    collector = pipe.collector(base)
    try:
        groups = collector.collect(
            [Job(StartKind.ROOT, t, REFERENCE, purpose="routing") for t in tasks],
            seed=derive_seed(seed, "pilot", "reference"),
        )
        chains = expert_checkpoints(store, base, collector)
        factors = {
            "match": match_factors(chains, pivot_set.matches, cfg.rl.pivots.n_samples),
            "likelihood": likelihood_factors(chains, base, collector, store),
        }
    finally:
        collector.close()
    order = [t.id for t in tasks]
    return {
        "reference": {g.job.task.id: g.success_rate for g in groups},
        "raw": {kind: {t: RouteEstimator(f).raw(t) for t in order} for kind, f in factors.items()},
        "env_steps": sum(g.cost.env_steps for g in groups),
    }


def predict_options(
    cost: Mapping[str, Any],
    pilot: Mapping[str, Any],
    raws: Mapping[str, Mapping[str, float]],
    order: Sequence[str],
    pivots: Mapping[str, Sequence[str]],
    updates: int = N_PREDICTED,
) -> dict[str, dict[str, float]]:
    """Per option variant of the horizon experiment: Hybrid's env steps per iteration C_H, its
    fixed cost (routing pass and demonstrations) and S(``updates``), from the cost pilot
    (``cost``, the default's inputs) and the routing pilot (estimates, reference success).

    * estimate routing: the shares are the routes of the variants' estimate (``raws``: each
      kind's raw estimates; ``variants.LEARNING_ESTIMATE``), calibrated on the first
      ``variants.LEARNING_CALIBRATION`` tasks, tasks without pivots to Root; the routing pass is
      the calibration tasks' probes; the episode lengths by mode stay the probe-routed ones;
    * reeval=near: the Local term times the share of Local tasks whose calibrated estimate is
      within :data:`REEVAL_MARGIN` of tau_low - the estimate the phase would hold: the routing
      estimate's, calibrated on the calibration tasks, when it routes; otherwise ``match``
      (what a phase routed by probes builds), calibrated on every routing-pass probe;
    * root_expand: the Root term grows by ``(G - P) x`` the mean chance that a Root task's two
      probes differ, at its reference success;
    * decision_quota and tau_suffix change no env cost in the model: the default's value."""
    base = cm.HybridInputs(**cost["hybrid_inputs"])
    tau_low, tau_high = pilot["thresholds"]
    tasks = pilot["tasks"]
    n, probes = len(order), pilot["routing_probes"]
    e_root = cost["routing_pass"] / (n * probes)
    c_v, extra = cost["vanilla_per_iteration"], cost["extra_demo_env_steps"]

    def modes_of(by: Mapping[str, float]) -> dict[str, Route]:
        return {
            t: route_for(by[t], tau_low, tau_high) if pivots.get(t) else Route.ROOT for t in order
        }

    probe_p = {t: tasks[t]["probes"] / probes for t in order}

    def fitted(raw: Mapping[str, float], on: Sequence[str]) -> dict[str, float]:
        gamma = fit_gamma([(raw[t], tasks[t]["probes"], probes) for t in on])
        return {t: calibrated(raw[t], gamma) for t in order}

    calibration = order[:LEARNING_CALIBRATION]
    routing = fitted(raws[LEARNING_ESTIMATE], calibration)
    by_probes = fitted(raws["match"], order)  # a probe-routed phase's estimate for reeval=near
    estimated = {t: probe_p[t] if t in calibration else routing[t] for t in order}

    def inputs(
        modes: Mapping[str, Route], near: Mapping[str, float] | None, expand: bool
    ) -> cm.HybridInputs:
        shares = {m: sum(v == m for v in modes.values()) / n for m in ROUTED}
        local = [t for t in order if modes[t] == Route.LOCAL]
        root = [t for t in order if modes[t] == Route.ROOT]
        close = [t for t in local if near is not None and near[t] >= tau_low - REEVAL_MARGIN]
        return replace(
            base,
            share_local=shares[Route.LOCAL],
            share_suffix=shares[Route.SUFFIX],
            share_root=shares[Route.ROOT],
            reeval_share=len(close) / len(local) if near is not None and local else 1.0,
            expand_share=(
                sum(cm.differ_chance(tasks[t]["reference"]) for t in root) / len(root)
                if expand and root
                else 0.0
            ),
        )

    probe_modes, estimate_modes = modes_of(probe_p), modes_of(estimated)
    options: dict[str, tuple[dict[str, Route], dict[str, float] | None, bool, int]] = {
        "default": (probe_modes, None, False, n),
        "tau_suffix-0.5": (probe_modes, None, False, n),
        "learn-quota": (probe_modes, None, False, n),
        "learn-estimate": (estimate_modes, None, False, LEARNING_CALIBRATION),
        "learn-reeval": (probe_modes, by_probes, False, n),
        "learn-expand": (probe_modes, None, True, n),
        "learn": (estimate_modes, routing, True, LEARNING_CALIBRATION),
    }
    out = {}
    for name, (modes, near, expand, probed) in options.items():
        x = inputs(modes, near, expand)
        c_h = cm.hybrid_cost(x)
        fixed = cm.routing_pass_cost(probed, probes, e_root) + extra
        out[name] = {
            "hybrid_per_iteration": c_h,
            "fixed_env_steps": fixed,
            "share_local": x.share_local,
            "share_root": x.share_root,
            "reeval_share": x.reeval_share,
            "expand_share": x.expand_share,
            f"saving_{updates}": cm.saving(c_v, c_h, updates, fixed),
        }
    return out


def _counts(modes: Iterable[Route]) -> dict[str, int]:
    """How many tasks each routed mode holds (by its value, as the pilot's JSON keeps it)."""
    out = {route.value: 0 for route in ROUTED}
    for m in modes:
        out[m.value] += 1
    return out


def route_pilot_table(results: Sequence[Mapping[str, Any]]) -> str:
    """The estimates' quality and the options' predictions as markdown, one row per pilot."""
    from adaroll.experiments.inputs import markdown_table

    head = [
        "profile",
        "seed",
        "reference modes L/S/R",
        "Spearman: 4 probes / match / likelihood",
        "mode agreement: 4 probes",
        *(f"match, c={c}" for c in CALIBRATIONS),
        *(f"likelihood, c={c}" for c in CALIBRATIONS),
    ]
    rows = []
    for r in results:
        m, a, s = r["reference_modes"], r["mode_agreement"], r["spearman"]
        rows.append(
            [
                r["profile"],
                str(r["seed"]),
                f"{m['local']}/{m['suffix']}/{m['root']}",
                " / ".join("-" if s[k] is None else f"{s[k]:.2f}" for k in ("probes", *ESTIMATES)),
                f"{a['probes']:.2f}",
                *(f"{a[f'{k}-{c}']:.2f}" for k in ESTIMATES for c in CALIBRATIONS),
            ]
        )
    options = [
        [
            r["profile"],
            name,
            f"{p['hybrid_per_iteration']:,.0f}",
            f"{p['fixed_env_steps']:,.0f}",
            f"{100 * p['reeval_share']:.0f}%",
            f"{100 * p['expand_share']:.0f}%",
            f"{100 * p[f'saving_{N_PREDICTED}']:+.1f}%",
        ]
        for r in results
        for name, p in r["predictions"].items()
    ]
    head2 = [
        "profile",
        "option",
        "C_H",
        "fixed (routing pass + demos)",
        "Local re-probed",
        "Root grown",
        f"S({N_PREDICTED})",
    ]
    return markdown_table(head, rows) + "\n\n" + markdown_table(head2, options)
