"""Snapshot backends behind one protocol; importing this package registers the built-in ones."""

from adaroll.snapshots import memory, replay  # noqa: F401  (registration)
