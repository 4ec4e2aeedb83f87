"""Rollout collection: the scheduler says *what* to run (jobs), this package says *how*."""
