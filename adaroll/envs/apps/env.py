"""``AppsEnv``: six web apps with their own servers and databases, driven like the web env.

Each env is one isolated browser whose namespaces also hold the apps' servers (a threaded
HTTP server process per app, :mod:`adaroll.envs.apps.appserver`) and their SQLite databases,
all as the browser's unprivileged account, on the namespace's private tmpfs: nothing to start
by hand, and one unit for a CRIU snapshot (:mod:`adaroll.snapshots.criu.apps`).

* **reset** loads the task's seeded content into every app's database (each server keeps a copy
  as the task's start) and loads the start page; the instruction is the template's text.
* **step** dispatches the action as input events (the web env's :mod:`~adaroll.envs.web.
  input_events`: taps, typing, keys, swipes, in CSS pixels of the viewport), lets the page
  settle - short timers, animation frames and requests in flight, the servers' latency
  included (:mod:`adaroll.envs.apps.page`) - loads another app's page when a link asked for
  one, checks that every server is alive, and judges: the databases are read (never the DOM)
  and diffed against the task's start (:class:`~adaroll.envs.apps.tasks.judge.Goal`). Success
  ends the episode (reward 1); ``done()`` ends it too, successful only if the judge says so.
* **observe** is the web env's element list over the whole viewport (a laptop's 1280 x 800 by
  default), with a screenshot of it when ``screenshot`` is on.

Faults: a server that died (``info`` names it), a database that cannot be read, or a browser
that stops answering make the env unusable (:class:`~adaroll.envs.base.EnvFault`): the rollout
layer re-runs the group in fresh envs and trains on nothing of it.
"""

from __future__ import annotations

import dataclasses
import itertools
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import asdict, replace
from typing import Any

from adaroll.actions import Action, ActionKind
from adaroll.envs.apps.config import APP_NAMES, AppsEnvConfig
from adaroll.envs.apps.launch import (
    data_path,
    http_call,
    launcher_command,
    server_code,
    server_processes,
)
from adaroll.envs.apps.page import APP_READY_JS, APPS_PRELUDE_JS
from adaroll.envs.apps.state import State, StateReader, checksum
from adaroll.envs.apps.tasks.base import Instance
from adaroll.envs.apps.tasks.catalog import get_template, instance
from adaroll.envs.base import ENVS, EnvFault, InvalidActionError, Observation, TaskSpec
from adaroll.envs.options import config_from_options
from adaroll.envs.web import dom
from adaroll.envs.web.browser import (
    FAST_FRAME_FLAGS,
    BrowserConfig,
    BrowserProcess,
    chromium_version,
    find_chromium,
)
from adaroll.envs.web.cdp import CDPError, evaluation_value
from adaroll.envs.web.env import WebEnv, WebEnvConfig, coerce_task
from adaroll.envs.web.input_events import execute
from adaroll.envs.web.page_prelude import prelude_js
from adaroll.envs.web.screenshots import decode_png

_WHERE_ONLY = ("step_timeout_s", "reset_timeout_s", "server_python")
_BROWSER_WHERE_ONLY = ("startup_timeout", "startup_attempts", "tmpfs_size_mb", "base_dir", "user")
_loads = itertools.count(1)


def launch_config(config: AppsEnvConfig) -> BrowserConfig:
    """How an apps env launches its browser: a viewport-sized window and the app supervisor in
    Chromium's place (:func:`~adaroll.envs.apps.launch.launcher_command`)."""
    launch = config.browser
    python, code_dir = server_code(config.server_python, launch.user)
    extra = (*launch.extra_args, *(FAST_FRAME_FLAGS if config.screenshot else ()))
    return replace(
        launch,
        window_size=config.viewport,
        extra_args=extra,
        launcher=launcher_command(
            python, code_dir, None, config.ports(), config.latency_scale, config.server_mode
        ),
    )


def _as_apps_config(config: WebEnvConfig | None) -> AppsEnvConfig:
    """``config`` as an :class:`AppsEnvConfig` (a CRIU image made elsewhere hands branches a
    plain :class:`WebEnvConfig`: its fields are kept, the apps' take their defaults)."""
    if config is None:
        return AppsEnvConfig()
    if isinstance(config, AppsEnvConfig):
        return config
    return AppsEnvConfig(
        **{f.name: getattr(config, f.name) for f in dataclasses.fields(WebEnvConfig)}
    )


@ENVS.register("apps")
class AppsEnv(WebEnv):
    """Six apps with servers and databases on one Chromium page (see the module docstring)."""

    name = "apps"
    max_live = 6
    episodes_per_env = 8  # a reset reloads the databases and the page; a fresh env ~1 s
    whole_app = True
    """Its state lives in server processes and files too: only ``app-criu`` snapshots it."""
    config: AppsEnvConfig

    @staticmethod
    def validate_options(**options: Any) -> None:
        config_from_options(AppsEnvConfig, options, "apps env")

    @staticmethod
    def settings(**options: Any) -> dict[str, Any]:
        """Every option with its default, the browser's version and the servers' latency
        table (:func:`adaroll.envs.env_settings`)."""
        from adaroll.envs.apps.appserver.framework import LATENCY_MS

        config = config_from_options(AppsEnvConfig, options, "apps env")
        settings = {
            **asdict(config),
            "chromium": chromium_version(
                find_chromium(config.browser.executable, headless_shell=True)
            ),
            "apps": list(APP_NAMES),
            "latency_ms": dict(LATENCY_MS),
        }
        for name in _WHERE_ONLY:
            settings.pop(name)
        for name in _BROWSER_WHERE_ONLY:
            settings["browser"].pop(name)
        return settings

    def __init__(
        self,
        config: WebEnvConfig | None = None,
        *,
        browser: BrowserProcess | Mapping[str, Any] | None = None,
        **overrides: Any,
    ) -> None:
        """``browser``: adopt a running apps browser (a restored branch), or a mapping of
        :class:`BrowserConfig` fields; else the env launches browser and servers. ``overrides``:
        fields of :class:`AppsEnvConfig`, checked by name and type."""
        config = _as_apps_config(config)
        if isinstance(browser, Mapping):
            overrides["browser"], browser = browser, None
        if overrides:
            given = config_from_options(AppsEnvConfig, overrides, "apps env")
            config = replace(config, **{name: getattr(given, name) for name in overrides})
        self._instance: Instance | None = None
        self._start: State | None = None
        self.last_verdict = ""
        launched = None
        if browser is None:
            launched = browser = BrowserProcess.launch(launch_config(config))
        try:
            super().__init__(config, browser=browser)
        except BaseException:
            if launched is not None:
                launched.kill()
            raise
        self._owns_browser = launched is not None
        self._reader = StateReader(lambda name: data_path(self._browser, name), APP_NAMES)

    @property
    def screen(self) -> tuple[int, int]:  # type: ignore[override]
        return self.config.viewport

    def reconnect(self) -> None:
        """Open a fresh DevTools session with the web prelude and the apps' additions."""
        if self._cdp is not None:
            self._cdp.close()
        self._cdp = self._browser.connect()
        prelude = prelude_js(self.config) + APPS_PRELUDE_JS
        _, added, evaluated = self._cdp.call_all(
            ("Page.enable", {}),
            ("Page.addScriptToEvaluateOnNewDocument", {"source": prelude}),
            ("Runtime.evaluate", {"expression": prelude, "returnByValue": True}),
        )
        evaluation_value(evaluated)
        self._prelude_id = added.get("identifier")

    def warm_for(self, task: TaskSpec) -> bool:
        """Any live apps env resets to any task at the same cost (databases and page reload)."""
        return True

    # -- episode ----------------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        options = options or {}
        if "task" not in options:
            raise ValueError("AppsEnv.reset needs options={'task': TaskSpec('apps', NAME, SEED)}")
        task = coerce_task(options["task"], seed, "apps", get_template)
        with self._call("reset", self.config.reset_timeout_s):
            return self._reset(task)

    def _reset(self, task: TaskSpec) -> tuple[Observation, dict[str, Any]]:
        inst = instance(task.template, task.seed)
        ports = self.config.ports()
        for app in APP_NAMES:
            status, answer = http_call(
                self._browser,
                ports[app],
                "POST",
                "/__admin/load",
                {"tables": inst.tables.get(app, {})},
            )
            if status != 200:
                raise EnvFault(f"the {app} server refused the content of {task.id}: {answer}")
        self._reader.forget()
        self._start = None
        app, view = inst.start
        self._load_page(f"http://127.0.0.1:{ports[app]}/?load={next(_loads)}{view}")
        self._instance = inst
        self._task = task
        self._instruction = inst.instruction
        self._steps = 0
        self._done = False
        self._success = False
        self._max_steps = self.config.max_steps or inst.template.max_steps
        self.last_verdict = ""
        obs = self.observe()
        return obs, {
            "instruction": self._instruction,
            "task": task.id,
            "max_steps": self._max_steps,
        }

    def _step(self, action: Action) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        t0 = time.perf_counter()
        agent_done = action.kind is ActionKind.DONE
        if action.kind is ActionKind.OPEN_APP:
            raise InvalidActionError(
                "open_app is not an action here: the app switcher is a page link"
            )
        if not agent_done:
            execute(self, action)
            self._settle(frames=2 if action.kind is ActionKind.SWIPE else 0)
            url = self.cdp.evaluate("__adaroll.takeNavigation()")
            if url:
                self._load_page(str(url))
        self._steps += 1
        self.check_servers()
        verdict = self.verdict()
        success = verdict.success
        terminated = success or agent_done
        truncated = not terminated and self._steps >= self._max_steps
        self._done = terminated or truncated
        self._success = success
        self.last_verdict = verdict.describe()
        obs = self.observe()
        self.last_step_seconds = time.perf_counter() - t0
        info: dict[str, Any] = {
            "instruction": self._instruction,
            "steps": self._steps,
            "unsettled": 0 if agent_done else self.last_unsettled,
            "judge": self.last_verdict,
        }
        if self._done:
            info["success"] = success
        return obs, (1.0 if success else 0.0), terminated, truncated, info

    def observe(self) -> Observation:
        width, height = self.config.viewport
        with self._call("observe", self.config.step_timeout_s):
            raw = self.cdp.evaluate(
                f"__adaroll.elements({int(self.config.max_elements)}, {width}, {height}, "
                f"{dom.MAX_TEXT})"
            )
            shot = self.screenshot() if self.config.screenshot else None
        return Observation(dom.parse_elements(raw), (width, height), shot)

    def screenshot(self) -> Any:
        """The viewport as an H x W x 3 uint8 array."""
        with self._call("screenshot", self.config.step_timeout_s):
            data = self.cdp.call(
                "Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True}
            )
        return decode_png(data["data"])

    # -- the apps' state (privileged: the judge, experts, snapshot checks) -------------------------
    @property
    def task_instance(self) -> Instance:
        if self._instance is None:
            self._instance = instance(self.task.template, self.task.seed)
        return self._instance

    def app_state(self) -> State:
        """Every app's database now."""
        return self._read(self._reader.current)

    def start_state(self) -> State:
        """Every app's database at the task's start."""
        if self._start is None:
            self._start = self._read(self._reader.start)
        return self._start

    def state_checksum(self) -> str:
        """A hash of every database now (snapshot backends compare it across a restore)."""
        return checksum(self.app_state())

    def verdict(self) -> Any:
        """The judge's verdict on the databases now (:meth:`Goal.verdict`)."""
        return self.task_instance.goal.verdict(self.start_state(), self.app_state())

    def check_servers(self) -> None:
        """Raise (and keep) an :class:`EnvFault` when an app server is gone."""
        alive = server_processes(self._browser, APP_NAMES)
        missing = [app for app in APP_NAMES if app not in alive]
        if missing:
            self._fault = EnvFault(f"apps env: {self._browser_state()}; the episode is lost")
            raise self._fault

    def _browser_state(self) -> str:
        """The browser's state and which app servers died (for fault messages: in the shared
        server mode a dead server ends the namespace, and the browser with it)."""
        state = super()._browser_state()
        try:
            alive = server_processes(self._browser, APP_NAMES)
        except OSError:
            return state
        missing = [app for app in APP_NAMES if app not in alive]
        return f"{state}; the server(s) of {', '.join(missing)} died" if missing else state

    def _read(self, read: Any) -> State:
        try:
            return read()
        except (OSError, sqlite3.Error) as exc:
            self._fault = EnvFault(f"apps env: cannot read the apps' databases: {exc}")
            raise self._fault from exc

    # -- internals ----------------------------------------------------------------------------------
    def _load_page(self, url: str) -> None:
        cdp = self.cdp
        cdp.clear_events()
        result = cdp.call("Page.navigate", {"url": url})
        if result.get("errorText"):
            if self._task is not None:
                self.check_servers()  # a dead server is the reason worth reporting
            raise CDPError(f"cannot load {url}: {result['errorText']}")
        cdp.wait_event("Page.loadEventFired", timeout=20.0)
        self._wait_until(APP_READY_JS, timeout=10.0)
        self._settle()
