"""CRIU snapshots of a live browser: one dump, many independent branches (paper section 3.3).

The snapshot backend of the web environment's browsers, registered as ``criu``
(``env.snapshot_backend: criu``), and of the apps env's browser with its app servers and
databases, ``app-criu`` (:mod:`~adaroll.snapshots.criu.apps`); the generic layer
(:mod:`adaroll.snapshots`) names them only by those names and imports this package (and
``apps``) on first use. It is the one snapshot package that imports env packages (the web
env's and the apps env's, downward: no env imports it). Its modules:
:mod:`~adaroll.snapshots.criu.backend` (save, restore, reference counts),
:mod:`~adaroll.snapshots.criu.apps` (whole-app snapshots of the apps env),
:mod:`~adaroll.snapshots.criu.config` (knobs, image layout),
:mod:`~adaroll.snapshots.criu.images` (image records, manifests, state-dir pins),
:mod:`~adaroll.snapshots.criu.branch` (the seam with the web env),
:mod:`~adaroll.snapshots.criu.processes` (criu runs, subreaper, logs),
:mod:`~adaroll.snapshots.criu.restore_launcher` (namespaces per branch) and
:mod:`~adaroll.snapshots.criu.tool` (finding and checking the criu binary).

Why CRIU instead of replay: a snapshot must capture *everything* the page holds - DOM, JS
heap, timers, focus, a half-open date picker - and restoring must be cheaper than replaying the
action prefix (replay costs one settle-wait per step and is fragile on animations). A process
snapshot gives both, independent of how the state was reached.

How (docs/architecture.md, "Platform notes"; the web environment's :mod:`adaroll.envs.web.browser` already runs
every browser as the init of its own pid/mount/net/time namespaces with all mutable state -
profile, TMPDIR, HOME - on a private tmpfs at ``state_dir``):

* **save** = ``nsenter --mount=/proc/PID/ns/mnt criu dump -t PID --leave-running --tcp-close
  --ext-unix-sk --file-locks --network-lock skip --action-script HOOK``. criu runs *inside* the
  browser's mount namespace so it sees the tmpfs and leaves that namespace alone (it is not
  dumped); the hook copies ``state_dir`` next to the image on ``post-dump``, while the tasks
  are still frozen, so files and images agree byte for byte (criu checks file sizes on
  restore). ``--network-lock skip``: criu would otherwise lock the (private, unreachable)
  network with ``iptables-restore``, which this machine class does not have. The element-tree
  hash (and, for an env that observes screenshots, a screenshot hash: ``verify_screenshot``)
  are recorded for verification, with the env's episode bookkeeping
  (task, step counter, instruction) that lives outside the browser.
* **as whom**: criu runs as the browser's account (the uid/gid of its namespace init, kept
  with the image) - root for a root browser, else ``setpriv`` with ambient capabilities and
  ``--unprivileged`` (:func:`~adaroll.snapshots.criu.tool.run_as_account`; docs/web.md,
  "Browsers without root"), so dumped and restored tasks are never root.
* **restore** = the backend's restore launcher (:mod:`~adaroll.snapshots.criu.restore_launcher`, one
  small single-threaded process) moves into a new mount namespace with private propagation,
  mounts a per-branch tmpfs at ``state_dir`` and an overlay on top of it (lower = the copied
  state, upper/work on the tmpfs), spawns ``criu restore -d --pidfile ...`` there and moves
  back: what ``unshare``, ``mount`` and ``ip`` would do, with system calls instead of seven
  programs (about 13 ms less per restore). criu recreates fresh pid and time namespaces
  per restore; the network namespace is dumped as *external* and every branch gets a fresh one
  with ``lo`` up (cheaper than criu rebuilding it with ``ip`` commands),
  so branches never share a port, a file or a pid. criu's kernel-probe cache is shown to it at
  ``/run`` from a tmpfs directory (criu re-probes the kernel, ~0.1-0.2 s, whenever ``/run`` is
  not a tmpfs). The controller is a child subreaper while restoring, so the restored init is
  re-parented to it and can be reaped; the branch is
  adopted as a :class:`~adaroll.envs.web.browser.BrowserProcess` (reached by ``setns`` into its
  network namespace) and wrapped by :meth:`~adaroll.envs.web.env.WebEnv.attach` - a full
  :class:`~adaroll.envs.web.env.WebEnv` that continues the episode.
* **verification** (paper A.1): after every restore the branch must be alive, answer over CDP,
  and show the element-tree hash and the screenshot hash (if one was recorded) of save time. A mismatch raises
  :class:`SnapshotVerificationError` (``verify="raise"``) or is recorded on the branch
  (``verify="report"``: ``branch.restore_info["check"]``). The rollout layer then replays the
  checkpoint's prefix instead (:mod:`adaroll.snapshots.fallback`) and counts the fallback.
  The checks and the screenshot hashes: :mod:`adaroll.snapshots.verification`.
* **resources**: a pool caps live branches (sized from cores and available memory, about 50 MB
  PSS per branch measured here), a semaphore caps concurrent restores (criu restore is CPU-bound).
  Images are reference-counted (``save`` = 1 reference, :meth:`CriuSnapshots.retain` adds,
  :meth:`CriuSnapshots.release` drops) and a branch holds its image (the overlay's lower layer)
  until it is closed; an image is deleted when neither holds it.
* **cleanup**: closing a branch SIGKILLs its pid-namespace init (the kernel kills the rest) and
  reaps it; its namespaces, tmpfs and overlay vanish with it. Crash safety comes from the web
  environment's janitor process (every restored init and this backend's directory are
  registered with it), so a SIGKILLed controller leaves no browser, mount or image behind.

Why the backend takes over the browser's host directory (``state_dir``'s parent): in the host
mount namespace ``state_dir`` is just an empty directory, but it is the *mount point* of every
branch's overlay. Removing it on the host (as closing the original env would) lazily unmounts
it in every other namespace too (Linux >= 3.18), and live branches would lose their profile
and TMPDIR. So :meth:`CriuSnapshots.save` takes ownership of that directory from the browser (see
:func:`~adaroll.snapshots.criu.branch.disown_dirs`) and removes it only when no image needs it and the original browser is
gone.
"""

from __future__ import annotations

from adaroll.snapshots.criu.backend import CriuSnapshots
from adaroll.snapshots.criu.config import CriuConfig, default_pool_size
from adaroll.snapshots.criu.tool import CriuUnavailableError

__all__ = ["CriuConfig", "CriuSnapshots", "CriuUnavailableError", "default_pool_size"]
