"""The ablation tables cost a variant run against its seed's target even though the variant
trains no Base->Vanilla of its own (they share the default run's Base)."""

from __future__ import annotations

from pathlib import Path

from adaroll.experiments.analyses import Inputs
from adaroll.experiments.profiles import PROFILES
from adaroll.experiments.specs import EXPERIMENTS


def _summary(target: float | None, curve: list[dict], reached: bool | None) -> dict:
    row = {
        "total_env_steps": curve[-1]["total_env_steps"],
        "val_avg4": curve[-1]["val_avg"],
        "reached_target": reached,
        "steps_to_target": None,
    }
    return {
        "target_val_avg4": target,
        "configurations": {"base_hybrid": row},
        "curves": {"base_hybrid": curve},
    }


def _point(steps: int, val: float) -> dict:
    return {
        "total_env_steps": steps,
        "policy_samples": 2 * steps,
        "train_samples": 3 * steps,
        "val_avg": val,
    }


def test_a_variant_without_its_own_target_is_costed_against_the_default_runs_target() -> None:
    slow = [_point(1000, 0.30), _point(2000, 0.45), _point(3000, 0.52)]
    never = [_point(1000, 0.30), _point(3500, 0.40)]
    summaries = {
        "default": {0: _summary(0.50, slow, True)},
        "bandit": {0: _summary(None, slow, None)},
        "demotion": {0: _summary(None, never, None)},
    }
    x = Inputs(EXPERIMENTS.get("options"), Path("."), PROFILES["mobile"], summaries, [0], Path("."))
    row = x.row("bandit", 0, "base_hybrid")
    assert (
        row["reached_target"] is True
        and row["steps_to_target"] == 3000
        and row["samples_to_target"] == 6000
    )
    (cost,) = x.to_target("demotion", "base_hybrid")
    assert cost.censored and cost.budget == 3500  # never reached: censored at its whole bill
    (reached,) = x.to_target("bandit", "base_hybrid")
    assert not reached.censored and reached.observed == 3000
    # without a default run there is no target to borrow: left as the run says
    alone = Inputs(
        EXPERIMENTS.get("options"),
        Path("."),
        PROFILES["mobile"],
        {"bandit": summaries["bandit"]},
        [0],
        Path("."),
    )
    assert alone.row("bandit", 0, "base_hybrid")["reached_target"] is None


def test_the_efficiency_table_has_the_val_and_the_train_target(tmp_path: Path) -> None:
    """Figure 4's table: the cost to the Val target (ours) and to the Train target (the
    paper's) per configuration, and each Hybrid's paired saving against its Vanilla with a
    verdict; "-" where the runs did not evaluate train at the marks."""
    from adaroll.experiments.analyses import efficiency
    from adaroll.training.summary import summarise

    def run(train_at_marks: bool) -> dict:
        def curve(steps: list[int], val: list[float], train: list[float]) -> list[dict]:
            return [
                _point(s, v)
                | {"iteration": i, "train_avg": t if train_at_marks or i == 2 else None}
                for i, (s, v, t) in enumerate(zip(steps, val, train, strict=True))
            ]

        curves = {
            "base_vanilla": curve([0, 4000, 8000], [0.3, 0.5, 0.5], [0.3, 0.5, 0.7]),
            "base_hybrid": curve([500, 2000, 9000], [0.3, 0.4, 0.5], [0.3, 0.6, 0.7]),
        }
        rows = {
            n: {"total_env_steps": c[-1]["total_env_steps"], "val_avg4": 0.5, "train_avg4": 0.7}
            for n, c in curves.items()
        }
        return summarise(rows, curves)

    summary = run(True)
    assert summary["target_train_avg4"] == 0.5 and summary["target_val_avg4"] == 13 / 30
    hybrid = summary["configurations"]["base_hybrid"]
    assert hybrid["steps_to_train_target"] == 2000 and hybrid["steps_to_target"] == 9000
    x = Inputs(
        EXPERIMENTS.get("efficiency"),
        tmp_path,
        PROFILES["mobile"],
        {"default": {0: summary}},
        [0],
        tmp_path,
    )
    text = efficiency(x).markdown
    assert "to Train target (median)" in text
    assert "| Base->Hybrid | 9,000 | 1 | 2,000 | 1 |" in text
    assert (
        "| Base->Hybrid vs Base->Vanilla | -5,000 [-5,000, -5,000] | contradicted | +2,000 [+2,000, +2,000] | held |"
        in text
    )
    plain = run(False)
    assert plain["target_train_avg4"] is None
    assert plain["configurations"]["base_hybrid"]["reached_train_target"] is None
    x = Inputs(x.exp, tmp_path, x.profile, {"default": {0: plain}}, [0], tmp_path)
    text = efficiency(x).markdown
    assert "| Base->Hybrid | 9,000 | 1 | - | - |" in text and "| contradicted | - | - |" in text
