"""The ``adaroll`` command line. Commands are thin: they parse options and call the package."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from adaroll.cli_common import ConfigOpt, SetOpt, load_or_exit, warn_if_other_checkout
from adaroll.cli_envs import envs_app
from adaroll.config import ConfigError, RunConfig, dump_config, load_config

app = typer.Typer(
    help="AdaRoll: adaptive rollouts for training GUI agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
experts_app = typer.Typer(
    help="Run scripted experts and save verified trajectories.", no_args_is_help=True
)
train_app = typer.Typer(
    help="Train one phase: sft, stage1, onestep, hybrid or vanilla.", no_args_is_help=True
)
pivots_app = typer.Typer(help="Score checkpoints and select pivots.", no_args_is_help=True)
config_app = typer.Typer(help="Show the configuration schema and defaults.", no_args_is_help=True)
app.add_typer(envs_app, name="envs")
app.add_typer(experts_app, name="experts")
app.add_typer(train_app, name="train")
app.add_typer(pivots_app, name="pivots")
app.add_typer(config_app, name="config")

OutOpt = Annotated[Path, typer.Option("--out", "-o", help="Run directory.")]
_config = load_or_exit


@app.command()
def run(
    out: OutOpt = Path("runs/main"),
    config: ConfigOpt = None,
    set_: SetOpt = None,
    quick: Annotated[bool, typer.Option(help="Tiny budgets, for tests and a first look.")] = False,
    fresh: Annotated[
        bool, typer.Option(help="Ignore what the run directory holds; start over.")
    ] = False,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
    go_on: Annotated[
        bool,
        typer.Option(
            "--go-on",
            help="Train even when the checks before training find that the run cannot mean "
            "anything (experts that never verify, no checkpoints, seeds that change nothing); "
            "the findings become warnings (checks.stop=false).",
        ),
    ] = False,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Collect rollouts on N Ray workers (rollout.backend=ray); starts a local Ray "
            "unless --ray-address is given. Results equal the single-process run's.",
        ),
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(
            help="Existing Ray cluster to use (e.g. auto, ray://head:10001); implies the Ray backend."
        ),
    ] = None,
) -> None:
    """The main job: the whole method end to end (experts -> Base -> SFT -> Stage I -> Vanilla,
    Hybrid and one-step-only from Base, Vanilla and Hybrid from Action and from SFT), every
    configuration with its whole bill, then the report. Resumes a killed run in OUT."""
    import shutil

    from adaroll.report import write_report
    from adaroll.training.pipeline import Pipeline

    extra = _rollout_overrides(workers, ray_address) + (["checks.stop=false"] if go_on else [])
    cfg = _config(config, (set_ or []) + extra, quick)
    warn_if_other_checkout()
    if fresh and out.exists():
        shutil.rmtree(out)
    summary = Pipeline(cfg, out, progress=progress, say=lambda m: typer.echo(m)).run()
    report = write_report(out)
    _print_headline(summary)
    typer.echo(f"\nreport: {report}\nsummary: {out / 'summary.json'}")


def _rollout_overrides(workers: int | None, ray_address: str | None) -> list[str]:
    """``--workers`` / ``--ray-address`` as config overrides (they switch to the Ray backend)."""
    out: list[str] = []
    if workers is not None or ray_address is not None:
        out.append("rollout.backend=ray")
    if workers is not None:
        out.append(f"rollout.workers={workers}")
    if ray_address is not None:
        out.append(f"rollout.ray_address={json.dumps(ray_address)}")
    return out


def _print_headline(summary: dict) -> None:  # type: ignore[type-arg]
    from adaroll.report import LABELS, table3
    from adaroll.training.cost_report import cost_lines
    from adaroll.training.purposes import purpose_table

    typer.echo("\n" + table3(summary))
    purposes = purpose_table(summary.get("purposes", {}), LABELS)
    if purposes:
        typer.echo(f"\nwhere the env steps go and where the gradient comes from:\n{purposes}")
    if summary.get("cost_model", {}).get("phases"):
        typer.echo("\n" + "\n".join(cost_lines(summary, LABELS)))
    rows = summary["configurations"]
    target = summary.get("target_val_avg4")
    if target is None:
        return
    typer.echo(f"\ntarget = mean of Base->Vanilla's last three Val Avg@4 = {100 * target:.2f}")
    typer.echo(
        "cost to the target (whole bill: rollouts, probes, replays, demonstrations, selection):"
    )
    for name, r in rows.items():
        if r.get("reached_target") is None:
            continue
        if not r["reached_target"]:
            typer.echo(
                f"  {LABELS[name]}: not reached (>= {r['total_env_steps']:,} total env steps)"
            )
            continue
        typer.echo(
            f"  {LABELS[name]}: {r['steps_to_target']:,} total env steps, "
            f"{r['samples_to_target']:,} policy samples"
        )


@app.command()
def report(
    runs: Annotated[list[Path], typer.Argument(help="Run directories.")],
) -> None:
    """Write report.md and the plots for each run directory."""
    from adaroll.report import write_report

    for run_dir in runs:
        try:
            typer.echo(write_report(run_dir))
        except FileNotFoundError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None


@app.command()
def experiment(
    names: Annotated[
        list[str],
        typer.Argument(
            help="Experiments to run: full, efficiency, routing, pivots, sensitivity, options, "
            "bandit-action, bandit-routing, device, recipe, train-probes, text-match (web), "
            "horizon (mobile-h6/h12/h24/h40), restore-cost, or all (every one the profile runs).",
            show_default=False,
        ),
    ],
    env: Annotated[
        str,
        typer.Option(
            help="Environment profile: mobile (the noisy phone), mobile-clean, "
            "mobile-h6/h12/h24/h40 (the phone by expert horizon), web, web-long "
            "(four times web's RL budget), web-long-tasks or web-apps (apps with servers "
            "and databases)."
        ),
    ] = "mobile",
    seeds: Annotated[str, typer.Option(help="Comma-separated seeds.")] = "0,1,2",
    quick: Annotated[
        bool, typer.Option(help="Tiny budgets (CI): same experiments, same outputs.")
    ] = False,
    jobs: Annotated[int, typer.Option(min=1, help="Runs trained at once (one process each).")] = 1,
    root: Annotated[Path, typer.Option(help="Where runs and results go.")] = Path(
        "runs/experiments"
    ),
    variants: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated optional variants to run and report (horizon: own-run-sft, "
            "tau_suffix-0.5, learn, learn-quota, learn-estimate, learn-reeval, learn-expand); "
            "the experiment's other variants always run. Default: every one.",
            show_default=False,
        ),
    ] = None,
    analyse_only: Annotated[
        bool,
        typer.Option(
            "--analyse-only",
            help="Train nothing and write nothing under ROOT: analyse the finished runs of SEEDS "
            "into --out (an unfinished run is an error naming it).",
        ),
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option(help="With --analyse-only: where results go (OUT/ENV[-quick]/NAME)."),
    ] = None,
) -> None:
    """Reproduce one of the paper's experiments over several seeds: trains the runs it needs
    (resuming and sharing runs between experiments) and writes results.md, results.json and
    its plot under ROOT/ENV[-quick]/NAME."""
    from adaroll.experiments.runner import analyse_experiments, run_experiments
    from adaroll.experiments.specs import EXPERIMENTS

    try:
        seed_list = [int(s) for s in seeds.split(",") if s.strip()]
    except ValueError:
        typer.echo(f"error: --seeds must be comma-separated integers, got {seeds!r}", err=True)
        raise typer.Exit(2) from None
    chosen = [n for n in EXPERIMENTS.names() if EXPERIMENTS.get(n).runs_on(env)]
    chosen = chosen if names == ["all"] else names

    def say(message: str) -> None:
        typer.echo(message, err=True)

    if analyse_only != (out is not None):
        typer.echo("error: --analyse-only and --out go together", err=True)
        raise typer.Exit(2)
    if out is not None and out.resolve().is_relative_to(root.resolve()):
        typer.echo(
            f"error: --out {out} is inside --root {root}; analyse into another place", err=True
        )
        raise typer.Exit(2)
    only = None if variants is None else [v.strip() for v in variants.split(",") if v.strip()]
    if out is None:
        warn_if_other_checkout()
    written = (
        analyse_experiments(
            chosen,
            profile=env,
            seeds=seed_list,
            quick=quick,
            root=root,
            out=out,
            variants=only,
            say=say,
        )
        if out is not None
        else run_experiments(
            chosen,
            profile=env,
            seeds=seed_list,
            quick=quick,
            root=root,
            jobs=jobs,
            variants=only,
            say=say,
        )
    )
    for path in written:
        typer.echo(path / "results.md")


@app.command()
def results(
    root: Annotated[
        Path, typer.Option(help="Where `adaroll experiment` wrote its results.")
    ] = Path("runs/experiments"),
    out: Annotated[Path, typer.Option(help="The results page to write.")] = Path("docs/RESULTS.md"),
    notes: Annotated[
        Path | None, typer.Option(help="Hand-written discussion appended to the page.")
    ] = None,
    pilots: Annotated[
        Path | None,
        typer.Option(help="Where `adaroll pilot` wrote its predictions (a table of them)."),
    ] = None,
) -> None:
    """Gather every experiment under ROOT into one page (tables, plots, commands, machine,
    versions, seeds) with the paper's numbers side by side."""
    from adaroll.experiments.results_doc import write_results

    typer.echo(write_results(root, out, notes, pilots))


def _pipeline(out: Path, config: Path | None, set_: list[str] | None, quick: bool = False):  # type: ignore[no-untyped-def]
    from adaroll.training.pipeline import Pipeline

    return Pipeline(_config(config, set_, quick), out, say=lambda m: typer.echo(m, err=True))


@experts_app.command("collect")
def experts_collect(
    split: Annotated[
        str, typer.Option(help="Task split: pretrain, train, val, heldout, heldout-templates.")
    ] = "train",
    expert: Annotated[
        str | None, typer.Option(help="scripted or remote (expert.options in the config).")
    ] = None,
    out: OutOpt = Path("runs/main"),
    config: ConfigOpt = None,
    set_: SetOpt = None,
) -> None:
    """Run the expert on a split; keep verified successes as trajectories and checkpoints
    under OUT/experts/SPLIT."""
    pipeline = _pipeline(
        out, config, [*(set_ or []), *([f"expert.kind={expert}"] if expert else [])]
    )
    store = pipeline.store(split)
    typer.echo(f"{len(store)} checkpoints in {out / 'experts' / split}")


@train_app.command("sft")
def train_sft_cmd(
    name: Annotated[str, typer.Option(help="Policy name under OUT/policies.")] = "base",
    split: Annotated[str, typer.Option(help="Expert split to clone.")] = "pretrain",
    init: Annotated[Path | None, typer.Option(help="Start from this saved policy.")] = None,
    out: OutOpt = Path("runs/main"),
    config: ConfigOpt = None,
    set_: SetOpt = None,
) -> None:
    """Behaviour cloning on expert steps (Base = SFT on the pretrain pool)."""
    from adaroll.policies import load_policy

    pipeline = _pipeline(out, config, set_)
    start = load_policy(pipeline.cfg.policy, init) if init else None
    pipeline.sft_policy(name, start, split)
    typer.echo(f"policy saved to {out / 'policies' / name}")


def _rl(
    algorithm: str,
    start: Path,
    name: str | None,
    out: Path,
    config: Path | None,
    set_: list[str] | None,
    resume: bool,
) -> None:
    from adaroll.policies import load_policy

    pipeline = _pipeline(out, config, set_)
    phase = pipeline.cfg.stage1 if algorithm == "stage1" else pipeline.cfg.rl
    phase = phase.model_copy(update={"algorithm": algorithm})
    result = pipeline.rl_phase(
        name or algorithm, load_policy(pipeline.cfg.policy, start), phase, resume=resume
    )
    typer.echo(json.dumps(result.final, indent=1, default=str))


StartOpt = Annotated[Path, typer.Option("--policy", help="Saved policy to start from.")]
NameOpt = Annotated[str | None, typer.Option(help="Phase directory name under OUT.")]
ResumeOpt = Annotated[bool, typer.Option(help="Continue the phase from its saved state.")]


def _register_rl_command(algorithm: str, doc: str) -> None:
    def command(
        policy: StartOpt,
        name: NameOpt = None,
        out: OutOpt = Path("runs/main"),
        config: ConfigOpt = None,
        set_: SetOpt = None,
        resume: ResumeOpt = False,
    ) -> None:
        _rl(algorithm, policy, name, out, config, set_, resume)

    command.__doc__ = doc
    train_app.command(algorithm)(command)


for _algorithm, _doc in (
    (
        "stage1",
        "Stage I: OneStep GRPO on pivots; keeps the best policy by Val Avg@k in OUT/NAME/best.",
    ),
    (
        "onestep",
        "Baseline: Stage I's OneStep GRPO on pivots for the Stage II budget (last policy).",
    ),
    ("hybrid", "Stage II: adaptive Local/Suffix/Root routing."),
    ("vanilla", "Baseline: trajectory-level GRPO from the task root for every task."),
):
    _register_rl_command(_algorithm, _doc)


@pivots_app.command("score")
def pivots_score(
    policy: StartOpt,
    name: Annotated[str, typer.Option()] = "manual",
    out: OutOpt = Path("runs/main"),
    config: ConfigOpt = None,
    set_: SetOpt = None,
) -> None:
    """N samples per train checkpoint; writes scores and the pivot set to OUT/pivots/NAME.json."""
    from adaroll.policies import load_policy

    pipeline = _pipeline(out, config, set_)
    pivot_set = pipeline.pivots(name, load_policy(pipeline.cfg.policy, policy), pipeline.cfg.stage1)
    typer.echo(
        f"{pivot_set.count} pivots of {len(pivot_set.scores)} checkpoints -> "
        f"{out / 'pivots' / (name + '.json')}"
    )


@pivots_app.command("signals")
def pivots_signals(
    run: Annotated[
        Path, typer.Argument(help="A run directory with a finished Base, e.g. RUNS/default/seed0.")
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Where signals.md/.json/.png go (not the run).")
    ],
) -> None:
    """Where the pivot signals differ on one seed: every train checkpoint scored by Base under
    each signal from the same N samples (the draw Stage I scored), the states each signal alone
    picks with their action-count patterns (Table 4), and how often reward variance is zero
    where disagreement is high. Only reads RUN."""
    from adaroll.experiments import pivot_signals

    if out.resolve().is_relative_to(run.resolve()):
        typer.echo(f"error: --out {out} is inside the run {run}; write elsewhere", err=True)
        raise typer.Exit(2)
    try:
        result = pivot_signals.measure(run, say=lambda m: typer.echo(m, err=True))
    except (FileNotFoundError, ConfigError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    pivot_signals.write(result, out)
    typer.echo(out / "signals.md")


@app.command("eval")
def eval_cmd(
    policy: StartOpt,
    split: Annotated[
        list[str] | None, typer.Option(help="Splits to evaluate (repeatable).")
    ] = None,
    k: Annotated[int, typer.Option(help="Attempts per task.")] = 4,
    seed: Annotated[int, typer.Option()] = 0,
    by_template: Annotated[
        bool, typer.Option("--by-template", help="Also print Avg@k and Pass@k per template.")
    ] = False,
    config: ConfigOpt = None,
    set_: SetOpt = None,
) -> None:
    """Avg@k / Pass@k of a saved policy on task splits."""
    from adaroll.algos.metrics import split_metrics
    from adaroll.evaluation import evaluate_split
    from adaroll.policies import load_policy

    pipeline = _pipeline(Path("."), config, set_)
    loaded = load_policy(pipeline.cfg.policy, policy)
    for name in split or ["train", "heldout"]:
        r = evaluate_split(loaded, pipeline.make_env, pipeline.split(name), k=k, seed=seed)
        typer.echo(
            f"{name}: Avg@{k} {100 * r.avg:.2f}  Pass@{k} {100 * r.pass_:.2f}  "
            f"({r.episodes} episodes, {r.env_steps} env steps)"
        )
        if by_template:
            for template, outcomes in r.by_template().items():
                m = split_metrics(outcomes, k)
                typer.echo(
                    f"  {template}: Avg@{k} {100 * m['avg']:.2f}  Pass@{k} {100 * m['pass']:.2f}"
                    f"  ({len(outcomes)} tasks)"
                )


@app.command()
def pilot(
    profiles: Annotated[list[str], typer.Argument(help="Experiment profiles, e.g. mobile-h24.")],
    seeds: Annotated[str, typer.Option(help="Comma-separated seeds.")] = "0",
    root: Annotated[Path, typer.Option(help="Where pilots go.")] = Path("runs/pilots"),
    routing: Annotated[
        bool,
        typer.Option(
            help="Also measure the zero-env-cost routing estimate against 16 root probes per "
            "train task (rank correlation, mode agreement with the 4-probe pass beside it) and "
            "predict each option of issue 40 (ROOT/PROFILE/seedK/route_pilot.json)."
        ),
    ] = False,
) -> None:
    """Predict before the runs: measure Base on the TRAIN split only (routing probes, pivots,
    one Suffix group per Suffix task) and print the cost model's Vanilla and Hybrid env steps
    per iteration and the saving S(N) at 10, 30 and 100 updates (ROOT/PROFILE/seedK/pilot.json)."""
    from adaroll.experiments.pilot import pilot_table, run_pilot
    from adaroll.experiments.profiles import PROFILES
    from adaroll.experiments.route_pilot import route_pilot_table, run_route_pilot

    unknown = [p for p in profiles if p not in PROFILES]
    if unknown:
        typer.echo(
            f"error: unknown profile(s) {', '.join(unknown)}; profiles: {', '.join(PROFILES)}",
            err=True,
        )
        raise typer.Exit(2)
    say = lambda m: typer.echo(m, err=True)  # noqa: E731
    pairs = [(p, int(s)) for p in profiles for s in seeds.split(",")]
    routed = [run_route_pilot(p, s, root, say=say) for p, s in pairs] if routing else []
    results = (
        [r["cost_pilot"] for r in routed]
        if routing
        else [run_pilot(p, s, root, say=say) for p, s in pairs]
    )
    typer.echo(pilot_table(results))
    if routed:
        typer.echo("\n" + route_pilot_table(routed))


@app.command()
def power(
    effect: Annotated[float, typer.Option(help="Predicted saving, total env steps to the target.")],
    slope: Annotated[
        float,
        typer.Option(help="Learning slope near the target: Avg@k points per 1,000 env steps."),
    ],
    seed_sd: Annotated[
        float, typer.Option(help="Spread of the paired difference over training seeds, env steps.")
    ],
    task_variance: Annotated[
        float, typer.Option(help="Mean over val tasks of p(1-p); 0.25 at most.")
    ] = 0.2,
    mark_spacing: Annotated[
        float, typer.Option(help="Env steps between evaluation marks.")
    ] = 1000.0,
    tasks: Annotated[
        str, typer.Option(help="Val sizes to consider (comma-separated).")
    ] = "80,160,320",
    attempts: Annotated[str, typer.Option(help="Attempts per task to consider.")] = "4,8,16",
    max_seeds: Annotated[int, typer.Option(help="Most seeds affordable.")] = 20,
) -> None:
    """How many seeds and what evaluation size detect EFFECT with 80% power (two-sided 5%):
    the crossing jitter of each evaluation size and the seeds it needs, then the cheapest
    evaluation within MAX_SEEDS (docs/RESULTS.md, 'Power')."""
    from adaroll.experiments import power as pw

    try:
        sizes = [(int(m), int(k)) for m in tasks.split(",") for k in attempts.split(",")]
        plans = [
            pw.plan(
                effect,
                task_variance=task_variance,
                slope=slope / 100 / 1000,
                seed_sd=seed_sd,
                tasks=m,
                attempts=k,
                mark_spacing=mark_spacing,
            )
            for m, k in sizes
        ]
        best = pw.smallest_evaluation(
            effect,
            max_seeds=max_seeds,
            task_variance=task_variance,
            slope=slope / 100 / 1000,
            seed_sd=seed_sd,
            tasks_options=tuple(sorted({m for m, _ in sizes})),
            attempts_options=tuple(sorted({k for _, k in sizes})),
            mark_spacing=mark_spacing,
        )
    except pw.PowerError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(
        "| val tasks | attempts | eval sd (pts) | crossing jitter (env steps) | paired sd | seeds for 80% power |"
    )
    typer.echo("|---:|---:|---:|---:|---:|---:|")
    for p in plans:
        typer.echo(
            f"| {p.tasks} | {p.attempts} | {100 * p.eval_sd:.2f} | {p.jitter:,.0f} | {p.difference_sd:,.0f} | {p.seeds} |"
        )
    if best is None:
        typer.echo(
            f"no evaluation size considered detects {effect:,.0f} env steps within {max_seeds} seeds"
        )
    else:
        typer.echo(
            f"cheapest within {max_seeds} seeds: {best.tasks} val tasks x {best.attempts} attempts, {best.seeds} seeds"
        )


@app.command()
def jitter(
    run: Annotated[Path, typer.Argument(help="A run directory (`adaroll run --out`).")],
    configuration: Annotated[
        str, typer.Option("--configuration", "-c", help="RL configuration, e.g. base_vanilla.")
    ] = "base_vanilla",
    repeats: Annotated[int, typer.Option(min=2, help="Evaluation seeds per saved policy.")] = 8,
    target: Annotated[
        float | None, typer.Option(help="Val Avg@k to cross (fraction); default: the run's target.")
    ] = None,
    split: Annotated[str, typer.Option(help="Split evaluated (val, as for the target).")] = "val",
    jobs: Annotated[
        int, typer.Option(min=1, help="Evaluations at once (one process each); same result.")
    ] = 1,
) -> None:
    """Crossing jitter: evaluate every policy a phase saved at its evaluations
    (rl.eval.keep_policies=true) under REPEATS fresh evaluation seeds and print where each seed
    first crosses the target, and their spread (env steps). Reports only: nothing is billed."""
    from functools import partial

    from adaroll.envs import make_env
    from adaroll.experiments.jitter import measure
    from adaroll.policies import load_policy
    from adaroll.training.pipeline import Pipeline

    saved = run / "config.yaml"
    if not saved.exists():
        typer.echo(f"error: {saved} does not exist (not a run directory)", err=True)
        raise typer.Exit(2)
    cfg = load_config(saved)
    if target is None:
        summary = (
            json.loads((run / "summary.json").read_text())
            if (run / "summary.json").exists()
            else {}
        )
        target = summary.get("target_val_avg4")
        if target is None:
            typer.echo("error: the run has no target yet; pass --target", err=True)
            raise typer.Exit(2)
    pipeline = Pipeline(cfg, run, progress=False, say=lambda m: typer.echo(m, err=True))
    try:
        result = measure(
            run / configuration,
            target,
            load=partial(load_policy, cfg.policy),  # partials pickle for --jobs
            make_env=partial(make_env, cfg.env.name, **cfg.env.options),
            tasks=pipeline.split(split),
            k=cfg.rl.eval.k,
            history_window=cfg.policy.history,
            repeats=repeats,
            seed=cfg.seed,
            jobs=jobs,
            progress=True,
        )
    except (FileNotFoundError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(
        f"{configuration}: target {100 * target:.2f}, {len(result.marks)} marks x {repeats} evaluation seeds"
    )
    for r, crossing in enumerate(result.crossings):
        typer.echo(
            f"  evaluation seed {r}: first crossing at "
            + (f"{crossing:,} phase env steps" if crossing is not None else "never")
        )
    spread = result.spread
    typer.echo(
        "crossing jitter (sd over evaluation seeds): "
        + (f"{spread:,.0f} env steps" if spread is not None else "n/a (fewer than two crossings)")
    )
    out = run / configuration / "jitter.json"
    out.write_text(json.dumps(result.as_dict(), indent=2))
    typer.echo(f"written: {out}")


@config_app.command("show")
def config_show(
    config: ConfigOpt = None, set_: SetOpt = None, quick: Annotated[bool, typer.Option()] = False
) -> None:
    """Print the resolved configuration as YAML."""
    typer.echo(dump_config(_config(config, set_, quick)))


@config_app.command("schema")
def config_schema() -> None:
    """Print every config field with its type, default and documentation (JSON schema), and
    under x-env-options / x-policy-options what each env and policy kind takes as
    env.options / policy.options."""
    from adaroll.options_schema import options_schemas

    schema = RunConfig.model_json_schema()
    options = options_schemas()
    schema["x-env-options"], schema["x-policy-options"] = (
        options["env.options"],
        options["policy.options"],
    )
    typer.echo(json.dumps(schema, indent=1, default=str))


@app.callback()
def _options(
    debug: Annotated[
        bool,
        typer.Option(
            "--debug",
            help="Show the Python traceback of an error (also accepted after the command).",
        ),
    ] = False,
) -> None:
    """AdaRoll: adaptive rollouts for training GUI agents."""
    global DEBUG
    DEBUG = DEBUG or debug


DEBUG = False
"""``--debug``: errors come with their traceback (otherwise one line each)."""


def interrupted_hint(argv: list[str]) -> str:
    """What a Ctrl-C of ``adaroll ARGV`` leaves and how to go on (``--fresh`` dropped: it would
    start over)."""
    import shlex

    words = [w for w in argv if w not in ("--fresh", "--debug")]
    command = next((w for w in words if not w.startswith("-")), "")
    again = "adaroll " + shlex.join(words)
    if command in ("run", "experiment"):
        return (
            "interrupted: every finished step and RL iteration is saved (files are written "
            f"whole); to resume, run the same command again:\n  {again}"
        )
    if command == "train":
        resume = "" if "--resume" in words else " --resume"
        return (
            "interrupted: the phase's last finished iteration is saved; to resume it:\n"
            f"  {again}{resume}"
        )
    return "interrupted"


def main() -> None:
    from adaroll.envs.base import EnvFault
    from adaroll.io import defer_interrupts, interrupt_received
    from adaroll.policies.small import PolicyFileError
    from adaroll.registry import UnknownNameError
    from adaroll.rollout.jobs import RolloutFailed
    from adaroll.snapshots.base import SnapshotError

    global DEBUG
    argv = sys.argv[1:]
    if "--debug" in argv:  # `adaroll run ... --debug` as well as `adaroll --debug run ...`
        DEBUG = True
        sys.argv[1:] = [a for a in argv if a != "--debug"]
    defer_interrupts()  # a Ctrl-C lets the file being written finish (adaroll.io.critical)
    try:
        app()
    except (KeyboardInterrupt, SystemExit) as exc:
        # typer turns a KeyboardInterrupt into a silent exit 130: say what it left
        if isinstance(exc, SystemExit) and not interrupt_received():
            raise
        typer.echo(f"\n{interrupted_hint(argv)}", err=True)
        sys.exit(130)
    except (
        ConfigError,
        UnknownNameError,
        FileNotFoundError,
        SnapshotError,
        PolicyFileError,
        EnvFault,
        RolloutFailed,
    ) as exc:
        if DEBUG:
            raise
        hint = "" if isinstance(exc, ConfigError) else " (--debug shows the traceback)"
        typer.echo(f"error: {_one_line(exc)}{hint}", err=True)
        sys.exit(2)


def _one_line(exc: BaseException) -> str:
    """The error's message: an env's or adapter's fault (or a group that kept failing on one)
    as its first line, any other whole (a config error lists every bad field)."""
    from adaroll.envs.base import EnvFault
    from adaroll.rollout.jobs import RolloutFailed

    text = str(exc) or type(exc).__name__
    return text.splitlines()[0] if isinstance(exc, (EnvFault, RolloutFailed)) else text


if __name__ == "__main__":
    main()
