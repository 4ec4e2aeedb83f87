"""Snapshot backends behind one protocol; importing this package registers the generic ones
(``memory``, ``replay``, ``forkserver``). The web environment's ``criu`` backend lives with it
(:mod:`adaroll.envs.web.criu`) and is imported the first time its name is looked up, so the
browser stack loads only when used."""

from adaroll.snapshots import forkserver, memory, replay  # noqa: F401  (registration)
