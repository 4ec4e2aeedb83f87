"""Starting BrowserGym tasks on Debian's Chromium, and resolving BrowserGym task ids.

How BrowserGym launches browsers (``browsergym-core`` 0.14): every ``BrowserEnv.reset`` calls
``chromium.launch(...)`` twice on one process-wide Playwright object - once for the task's
page (taking ``pw_chromium_kwargs``) and once for its chat window (``Chat``, which takes no
launch options at all). Passing ``executable_path`` through ``pw_chromium_kwargs`` would
therefore still leave the chat asking Playwright for its own browser download, which does not
exist here. ``browsergym.core`` exposes the shared Playwright object through
``_set_global_playwright``; :func:`install_playwright` puts a thin wrapper there whose
``chromium.launch`` adds ``executable_path`` (Debian's Chromium, found by
:func:`adaroll.envs.web.browser.find_chromium`) to every launch. Nothing in site-packages
is changed, and Playwright's own browser download is never needed.

Per launch (:func:`launch_options`, set by the env around each reset): the browser's account
and the hosts it may reach. As root, the wrapper :data:`RUN_AS_USER` is launched instead of
Chromium: it hands Playwright's profile directory to the account (``BrowserGymEnvConfig.user``)
and ``exec``s Chromium through ``setpriv`` (that uid/gid, no groups, no capabilities), so no
BrowserGym browser process runs as root; and Chromium's own sandbox is on (renderers and
utilities in their own user namespace under seccomp-bpf), which as root it refuses. ``allowed_hosts`` become Chromium flags: every other
host name resolves to nothing (``--host-resolver-rules``) and every other connection, IP
literals and loopback included, goes to a proxy that does not exist (``--proxy-server`` with
``--proxy-bypass-list`` = the allowed hosts): ``file://`` pages (MiniWoB++) need no host at
all. This is a browser setting, not a network namespace: it binds the pages, and a renderer
exploit would still have the account's network access.

MiniWoB++ pages come from the installed ``miniwob`` package: BrowserGym's MiniWoB tasks read
``MINIWOB_URL`` (the ``file://`` URL of its ``html/miniwob/`` folder, with a trailing slash),
which :func:`configure_miniwob_url` sets unless the user already did.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

BENCHMARK_PACKAGES = {
    "miniwob": "browsergym.miniwob",
    "webarena": "browsergym.webarena",
    "visualwebarena": "browsergym.visualwebarena",
    "workarena": "browsergym.workarena",
    "assistantbench": "browsergym.assistantbench",
}
"""Task-id prefix (``miniwob`` in ``miniwob.click-test-2``) -> the package that registers those
tasks with Gymnasium when imported (each is its own ``browsergym-*`` distribution)."""

GYM_PREFIX = "browsergym/"

_lock = threading.Lock()
_installed: Any = None
_per_launch = threading.local()

RUN_AS_USER = Path(__file__).resolve().parent / "run_as_user.sh"
"""What Playwright starts instead of Chromium when the browser must run as another account."""
NO_PROXY = "127.0.0.1:9"
"""The proxy every connection to a host outside ``allowed_hosts`` is sent to: the discard
port, where nothing listens, so such a request fails at once."""


def network_args(allowed_hosts: Sequence[str] | None) -> list[str]:
    """Chromium flags that limit a browser's network to ``allowed_hosts`` (host names or IP
    literals, ``*.example.org`` wildcards allowed); None: no limit."""
    if allowed_hosts is None:
        return []
    for host in allowed_hosts:
        if not host or any(c in host for c in " ,;/") or host.startswith("<"):
            raise ValueError(f"allowed_hosts: {host!r} is not a host name or IP address")
    rules = ", ".join(["MAP * ~NOTFOUND", *(f"EXCLUDE {h}" for h in allowed_hosts)])
    # loopback is proxied too unless allowed (first: Chromium drops rules listed before it)
    bypass = ";".join(["<-loopback>", *allowed_hosts])
    return [
        f"--host-resolver-rules={rules}",
        f"--proxy-server={NO_PROXY}",
        f"--proxy-bypass-list={bypass}",
    ]


@contextlib.contextmanager
def launch_options(
    ids: tuple[int, int] | None, args: Sequence[str], sandbox: bool = False
) -> Iterator[None]:
    """Browsers this thread launches inside the block run as ``ids`` (uid, gid; None: as this
    process) with ``args`` added, and with Chromium's own sandbox when ``sandbox`` (only as
    another account: Chromium refuses its sandbox as root)."""
    before = getattr(_per_launch, "value", None)
    _per_launch.value = (ids, list(args), sandbox and ids is not None)
    try:
        yield
    finally:
        _per_launch.value = before


class BrowserGymUnavailableError(RuntimeError):
    """``browsergym-core`` (or a benchmark package) is not installed."""


class _ChromiumAt:
    """Playwright's ``BrowserType`` with a fixed executable for every launch."""

    def __init__(self, real: Any, executable: str) -> None:
        self._real = real
        self.executable = executable

    def launch(self, **kwargs: Any) -> Any:
        kwargs.setdefault("executable_path", self.executable)
        ids, args, sandbox = getattr(_per_launch, "value", None) or (None, [], False)
        if sandbox:
            kwargs["chromium_sandbox"] = True  # Playwright then leaves out --no-sandbox
        if args:
            kwargs["args"] = [*(kwargs.get("args") or []), *args]
        if ids is not None:
            if not os.access(RUN_AS_USER, os.X_OK):
                raise BrowserGymUnavailableError(
                    f"{RUN_AS_USER} is not executable (chmod +x it), or set env.options.user: null"
                )
            env = dict(kwargs.get("env") or os.environ)
            env.update(
                ADAROLL_BROWSER_UID=str(ids[0]),
                ADAROLL_BROWSER_GID=str(ids[1]),
                ADAROLL_CHROMIUM=kwargs["executable_path"],
            )
            kwargs["env"], kwargs["executable_path"] = env, str(RUN_AS_USER)
        return self._real.launch(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class _PlaywrightAt:
    """A started Playwright whose ``chromium`` launches ``executable``."""

    def __init__(self, real: Any, executable: str) -> None:
        self._real = real
        self.chromium = _ChromiumAt(real.chromium, executable)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def import_browsergym_core() -> Any:
    try:
        return importlib.import_module("browsergym.core")
    except ImportError as exc:
        raise BrowserGymUnavailableError(
            f"the browsergym environment needs browsergym-core: pip install -e '.[browsergym]' ({exc})"
        ) from None


def _searchable_by_all(path: str) -> bool:
    """Every directory from / down to ``path`` may be passed through by any account."""
    current = os.path.abspath(path)
    while True:
        try:
            if not os.stat(current).st_mode & 0o001:
                return False
        except OSError:
            return False
        if current == "/":
            return True
        current = os.path.dirname(current)


def _reachable_tmpdir() -> str | None:
    """As root: a directory for Playwright's profile folders that the browser's account can
    reach - None when the temp dir already is; else a sibling of it (``TMPDIR`` + ``-pw``
    + pid, so that a folder named after ``TMPDIR`` still names the run's browsers), or one
    under /tmp. Mode 0711 (each profile in it stays 0700, the account's); removed by the crash
    janitor when this process exits."""
    import tempfile

    from adaroll.envs.web.browser import JANITOR

    base = tempfile.gettempdir()
    if os.geteuid() != 0 or _searchable_by_all(base):
        return None
    parent = os.path.dirname(base) if _searchable_by_all(os.path.dirname(base)) else "/tmp"
    path = os.path.join(parent, f"{os.path.basename(base)}-pw{os.getpid()}")
    os.makedirs(path, mode=0o711, exist_ok=True)
    os.chmod(path, 0o711)
    JANITOR.register_dir(path)
    return path


def install_playwright(executable: str | None = None) -> str:
    """Make BrowserGym launch Debian's Chromium (or ``executable``) in this process; returns the
    executable's path. Idempotent; a second call with another executable is an error, because
    the Playwright object is shared by every BrowserGym env of the process."""
    from adaroll.envs.web.browser import find_chromium

    path = find_chromium(executable)
    global _installed
    with _lock:
        if _installed is not None:
            if _installed.chromium.executable != path:
                raise ValueError(
                    f"BrowserGym already launches {_installed.chromium.executable} "
                    f"in this process; cannot switch to {path}"
                )
            return path
        core = import_browsergym_core()
        import playwright.sync_api

        tmp, browser_tmp = os.environ.get("TMPDIR"), _reachable_tmpdir()
        if browser_tmp is not None:  # the driver makes each profile under its TMPDIR
            os.environ["TMPDIR"] = browser_tmp
        try:
            real = playwright.sync_api.sync_playwright().start()
        finally:
            if browser_tmp is not None:
                if tmp is None:
                    os.environ.pop("TMPDIR", None)
                else:
                    os.environ["TMPDIR"] = tmp
        _installed = _PlaywrightAt(real, path)
        core._set_global_playwright(_installed)
    return path


def configure_miniwob_url() -> str:
    """Point BrowserGym's MiniWoB tasks at the installed ``miniwob`` package's pages (kept when
    ``MINIWOB_URL`` is already set, e.g. to an HTTP server)."""
    from adaroll.envs.web.miniwob import miniwob_html_dir

    if not os.environ.get("MINIWOB_URL"):
        os.environ["MINIWOB_URL"] = miniwob_html_dir().as_uri() + "/"
    return os.environ["MINIWOB_URL"]


def benchmark_of(task_name: str) -> str:
    """``miniwob`` for ``miniwob.click-test-2`` (a BrowserGym task name without ``browsergym/``)."""
    return task_name.split(".", 1)[0]


def normalise_task_name(name: str) -> str:
    """``browsergym/miniwob.click-test-2`` or ``miniwob.click-test-2`` -> ``miniwob.click-test-2``."""
    name = name.strip()
    if name.startswith(GYM_PREFIX):
        name = name[len(GYM_PREFIX) :]
    return name


def registered_tasks(benchmark: str) -> list[str]:
    """Task names (without ``browsergym/``) that ``benchmark``'s package registers."""
    import gymnasium

    prefix = f"{GYM_PREFIX}{benchmark}."
    return sorted(k[len(GYM_PREFIX) :] for k in gymnasium.registry if k.startswith(prefix))


def resolve_task(name: str) -> str:
    """The Gymnasium id of BrowserGym task ``name`` after importing its benchmark package, or a
    ValueError naming the environment, the task and what exists."""
    name = normalise_task_name(name)
    bench = benchmark_of(name)
    if "." not in name or bench not in BENCHMARK_PACKAGES:
        raise ValueError(
            f"browsergym environment: task {name!r} is not BENCHMARK.TASK with a "
            f"benchmark of {', '.join(BENCHMARK_PACKAGES)}"
        )
    import_browsergym_core()
    module = BENCHMARK_PACKAGES[bench]
    if bench == "miniwob":
        configure_miniwob_url()
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise BrowserGymUnavailableError(
            f"browsergym environment: task {name!r} needs the {module} package "
            f"(pip install browsergym-{bench}): {exc}"
        ) from None
    known = registered_tasks(bench)
    if name not in known:
        close = difflib.get_close_matches(name, known, n=3)
        hint = f"did you mean {', '.join(close)}?" if close else f"e.g. {', '.join(known[:6])}"
        raise ValueError(
            f"browsergym environment: unknown task {name!r}; {module} registers "
            f"{len(known)} tasks, {hint}"
        )
    return GYM_PREFIX + name
