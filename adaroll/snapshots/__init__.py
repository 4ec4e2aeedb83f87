"""Snapshot backends behind one protocol; importing this package registers the built-in ones.
The CRIU backend loads the browser stack only when used."""

from adaroll.snapshots import criu, forkserver, memory, replay  # noqa: F401  (registration)
