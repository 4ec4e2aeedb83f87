"""Runnable examples: AdaRoll inside other frameworks (each one run by a test, tests/examples)."""
