"""Runnable examples of AdaRoll inside other frameworks (each one run by a test)."""
