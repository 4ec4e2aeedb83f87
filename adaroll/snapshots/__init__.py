"""Snapshot backends behind one protocol; importing this package registers the generic ones
(``memory``, ``replay``, ``forkserver``). The ``criu`` backend of live web browsers
(:mod:`adaroll.snapshots.criu`, the one backend that imports an env package: the web env's) is
imported the first time its name is looked up, so the browser stack loads only when used."""

from adaroll.snapshots import forkserver, memory, replay  # noqa: F401  (registration)
