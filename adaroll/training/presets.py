"""Named override sets: ``--quick`` runs the whole pipeline on a tiny budget (tests, first look)."""

QUICK_OVERRIDES = [
    "sft.epochs=2",
    "stage1.budget={iterations: 2}",
    "stage1.eval.every=1",
    "rl.budget={iterations: 3}",
    "rl.eval.every=3",
    "rl.eval.k=2",
    "stage1.eval.k=2",
    "rl.scheduler.tasks_per_iteration=4",
    "stage1.scheduler.pivots_per_iteration=16",
]
