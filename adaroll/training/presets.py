"""Named override sets: ``--quick`` runs the whole pipeline on a small budget (tests, a first
look): fewer tasks, shorter phases, same method."""

QUICK_OVERRIDES = [
    "env.suite_options={n_pretrain: 120, n_train: 16, n_heldout: 16, n_heldout_templates: 8}",
    "sft.epochs=6",
    "stage1.budget={iterations: 4}",
    "stage1.eval.every=2",
    "stage1.scheduler.pivots_per_iteration=32",
    # every RL configuration updates, even where the routing pass is longer than 1,500 steps
    "rl.budget={env_steps: 1500, policy_samples: 1500, iterations: 40, min_optimizer_steps: 1}",
    "rl.eval.every_env_steps=500",
    "rl.eval.every_policy_samples=500",
]
