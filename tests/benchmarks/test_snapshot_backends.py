"""`benchmarks/snapshot_backends.py --smoke` finishes and its final JSON line holds its measurements."""

from __future__ import annotations

BACKENDS = {"memory", "forkserver", "forkserver+replay", "deepcopy", "replay"}


def test_smoke_run_prints_save_restore_times_and_step_rates_of_every_backend(smoke) -> None:
    result = smoke("snapshot_backends.py", 120)
    assert result["n"] == 2 and result["steps"] == 5
    assert result["replayed_steps_on_save"] == result["prefix"] * result["n"]  # one replay per save
    assert set(result["backends"]) == BACKENDS
    for figures in result["backends"].values():
        assert figures["steps_per_s"] > 0
        for op in ("save", "restore"):
            assert 0 <= figures[op]["median_ms"] <= figures[op]["p95_ms"]
