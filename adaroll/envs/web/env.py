"""``WebEnv``: MiniWoB++ tasks on a real headless Chromium, driven over the DevTools protocol.

Screen: the ``160 x 210`` CSS-pixel task area MiniWoB++ draws at the page's top-left. Action
coordinates are normalised to it (``x * 160``, ``y * 210`` CSS pixels).

Actions (the adaroll :class:`~adaroll.actions.Action` model):

Pointer actions are touch-like: afterwards the pointer is parked off the task area, so nothing
stays hovered, and the pages' CSS ``:hover`` rules are removed at load (a hover style that
swaps an icon moves the layout asynchronously - between press and release, or whenever Blink
next renders - which made outcomes depend on timing).

* ``tap`` - mouse press and release (``clickCount`` 1); ``double_tap`` - two clicks, the
  second with ``clickCount`` 2 (so ``dblclick`` fires); ``long_press`` - press, hold
  ``long_press_seconds``, release. A tap on a ``<select>`` focuses it and closes the native
  popup it opens (headless Chromium does not draw it, so it would be invisible state); a
  focused select is then operated with ``type`` (type-ahead) or arrow keys;
* ``swipe(direction)`` - one mouse-wheel event at the screen centre; the finger convention of
  :mod:`adaroll.actions` holds (``swipe(up)`` scrolls the content down by
  ``scroll_fraction`` of the screen height); ``swipe(x1, y1, x2, y2)`` - a drag: press at the
  start, ``drag_steps`` moves with the button held, release at the end;
* ``type(text)`` - ``Input.insertText`` into the focused text field; when the focused element is
  not a text field (e.g. a date/time input, a select) each character is sent as key events;
* ``key(k)`` - key down/up events for enter, tab, escape, backspace, delete, space, arrows,
  page up/down; the phone keys (back, home, recent, volume) are invalid here. A chord
  (``key(ctrl+a)``) holds its modifiers down around the key, with the DevTools ``modifiers``
  bits set on every event, so the page sees ``ctrlKey`` etc. and Chromium runs its editing
  shortcuts: ``ctrl+a`` selects all text of the focused field (then ``type`` replaces it and
  ``backspace`` deletes it);
* ``hover(x, y)`` - the pointer moves to (x, y) and stays there (it is not parked): the page
  gets ``mousemove``/``mouseover``/``mouseenter``, which open menus such as click-menu's
  nested ones; CSS ``:hover`` styles stay removed (see above);
* ``wait()`` - sleep ``wait_seconds``; ``done()`` - ends the episode (success only if the task
  already rewarded it); ``open_app`` is invalid.

Settle policy (identical for rollouts and replay): input events are dispatched synchronously
(the DevTools call returns once the page handled them); afterwards the env lets the page run
its queued tasks and then waits, inside the page, while any short timer (``setTimeout`` with a
delay <= ``settle_timer_ms``) or ``requestAnimationFrame`` callback is pending - at most
``settle_timeout_ms``. The wait is event-driven: the page wakes the settle loop when its last
pending callback has run (then lets queued tasks run and looks again), instead of polling
every few milliseconds (a page waiting on a 300 ms timer burnt about 10 ms of CPU per step).
Swipes (wheel scrolls, drags) first wait two animation frames, because the compositor applies scrolling asynchronously. jQuery animations are switched off (``jQuery.fx.off``), so pickers and
menus appear in their final state, and an idle page settles in about a millisecond.

Determinism: a reset loads the task page afresh, seeds ``Math.random`` with the task seed and
starts the episode. ``Date`` is virtual: it restarts at ``virtual_date`` with every episode and
advances with ``performance.now()`` (continuous across CRIU restores), so date pickers and
clocks show the same thing on every run. A reset parks the mouse pointer off the task area
(hover effects must not depend on earlier episodes or on rendering times), the text caret is not drawn (it blinks),
links to ``#`` do not navigate (a visit would enter the browser history and restyle every
``#`` link as ``:visited`` in later episodes) and ``alert``/``confirm``/``prompt`` never block.

Resets that reuse the page (``reuse_page``, the default without screenshots): a reset to the
template the page already holds skips the reload (60-90 ms of browser CPU) and starts the new
episode in the page, as MiniWoB++'s own episode loop does - the task rebuilds its area. First the
env removes what a freshly loaded page would not have: pending short timers and animation
frames, focus, selection, MiniWoB's click marks, scroll offsets. Then it compares the page's
*shell* - the body without the task area's content, the instruction and the reward display,
the task area's scroll offsets, and the event handlers on window, document and body - with the
shell after the page's first episode start; when they differ (a date picker or dropdown left
open, a menu appended to the body) the page is reloaded after all. ``reset_counts`` counts
loads, reuses and refused reuses. Screenshot envs always reload: after scrolling, Chromium
may keep a scroller composited, which changes a few antialiased pixels at its edge.

Privileged access: :meth:`WebEnv.evaluate` runs JavaScript in the page. Only experts, tests and
snapshot verification may use it; policies see :class:`~adaroll.envs.base.Observation` only.

Where the parts live: the page-side JavaScript (virtual clock, settle loop, episode cleanup and
page shell) in :mod:`~adaroll.envs.web.page_prelude`; actions as input events in
:mod:`~adaroll.envs.web.input_events`; screenshots and their viewport emulation in
:mod:`~adaroll.envs.web.screenshots`; this module keeps the env's lifecycle (connection, reset
and page reuse, step, settle, faults).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from adaroll.actions import Action, ActionKind
from adaroll.envs.base import (
    ENVS,
    EnvFault,
    EnvTimeout,
    EpisodeEnv,
    InvalidActionError,
    Observation,
    TaskSpec,
)
from adaroll.envs.options import config_from_options
from adaroll.envs.web import dom
from adaroll.envs.web.browser import (
    FAST_FRAME_FLAGS,
    BrowserConfig,
    BrowserProcess,
    BrowserUnavailableError,
    chromium_command,
    chromium_version,
    find_chromium,
)
from adaroll.envs.web.cdp import CDPError, CDPSession, CDPTimeoutError, evaluation_value
from adaroll.envs.web.input_events import execute, park
from adaroll.envs.web.miniwob import (
    PAGE_READY_JS,
    START_EPISODE_JS,
    STATUS_JS,
    UTTERANCE_JS,
    get_task,
    task_url,
)
from adaroll.envs.web.page_prelude import prelude_js
from adaroll.envs.web.screenshots import capture_png, decode_png, emulate_capture_viewport

SCREEN = dom.SCREEN


@dataclass(frozen=True)
class WebEnvConfig:
    """Knobs of the web environment (defaults are what rollouts, replay and tests use)."""

    screenshot: bool = False
    """Also capture a screenshot (H x W x 3 uint8 of the task area) with every observation
    (a lossless PNG of the task area only, decoded; the env keeps the capture's viewport
    emulation in place, and a browser the env launches itself draws frames unthrottled, see
    :data:`~adaroll.envs.web.browser.FAST_FRAME_FLAGS`)."""
    max_elements: int = dom.MAX_ELEMENTS
    """At most this many UI elements per observation."""
    max_steps: int | None = None
    """Override every task's step limit (None: the registry's per-task limit)."""
    settle_timer_ms: int = 1000
    """After an action, wait for pending ``setTimeout`` callbacks with at most this delay."""
    settle_timeout_ms: int = 1000
    """Upper bound on that wait (a page that keeps re-arming short timers)."""
    wait_seconds: float = 0.5
    """Duration of the ``wait()`` action."""
    long_press_seconds: float = 0.5
    """How long ``long_press`` holds the button."""
    scroll_fraction: float = 0.5
    """``swipe(direction)`` scrolls by this fraction of the screen's height/width."""
    drag_steps: int = 5
    """Intermediate mouse moves of a coordinate swipe (drag)."""
    virtual_date: str | None = "2024-01-15T10:00:00+00:00"
    """The page clock's start (ISO 8601); None uses the real clock (non-deterministic)."""
    data_mode: str = "train"
    """MiniWoB++ data mode passed to ``core.setDataMode`` (as the package's own env does)."""
    step_timeout_s: float = 30.0
    """Bound on one ``step``/``observe`` call (and the privileged helpers), all its DevTools
    commands and waits together; past it the call raises :class:`~adaroll.envs.base.EnvTimeout`
    and the env is unusable (a hung browser). A step normally takes 5-50 ms."""
    reset_timeout_s: float = 60.0
    """Bound on one ``reset`` (page load, image preload, episode start)."""
    reuse_page: bool = True
    """A reset to the template already loaded starts the new episode in that page, as MiniWoB++'s
    own episode loop does (the task rebuilds its area), instead of reloading it: a reload costs
    the browser about 60-90 ms of CPU, the episode start a few. See "Resets" in the module
    docstring ("Resets that reuse the page"); ignored with ``screenshot``; False reloads on
    every reset."""
    single_process: bool = False
    """Launch Chromium with ``--single-process`` (browser, renderer and utility work in one
    process): CRIU images about a sixth smaller and restores a little faster. Off by default:
    Chromium calls the mode unsupported, and it is not the same env - some text is drawn in
    another face and some elements land 1/10,000 of the width apart (docs/web.md, "Speed")."""
    browser: BrowserConfig = field(default_factory=BrowserConfig)
    """How to launch the browser when the env owns one."""


_WHERE_ONLY = ("step_timeout_s", "reset_timeout_s")
_BROWSER_WHERE_ONLY = ("startup_timeout", "startup_attempts", "tmpfs_size_mb", "base_dir", "user")
"""Options that decide how long to wait and where files go, never what an episode shows or
does: left out of :meth:`WebEnv.settings`, so a changed default there does not stop a resume."""


def _launch_config(config: WebEnvConfig) -> BrowserConfig:
    """How an env of ``config`` launches its own browser."""
    launch = config.browser
    if config.screenshot:  # a screenshot need not wait for the next 60 Hz frame
        launch = replace(launch, extra_args=(*launch.extra_args, *FAST_FRAME_FLAGS))
    if config.single_process:
        launch = replace(launch, extra_args=(*launch.extra_args, "--single-process"))
    return launch


def coerce_task(
    task: Any, seed: int | None, env: str = "web", lookup: Callable[[str], Any] = get_task
) -> TaskSpec:
    """``options["task"]`` (a TaskSpec, an id ``ENV:TEMPLATE#SEED`` or a template name with
    ``seed``) as a TaskSpec of ``env`` whose template ``lookup`` knows (its KeyError's message
    becomes the ValueError's)."""
    if isinstance(task, TaskSpec):
        spec = task
    elif isinstance(task, str):
        spec = TaskSpec.from_id(task) if ":" in task else TaskSpec(env, task, seed or 0)
    else:
        raise ValueError(f"options['task'] must be a TaskSpec or a task id, got {task!r}")
    if spec.env != env:
        article = "an" if env[:1] in "aeiou" else "a"
        raise ValueError(f"task {spec.id} is not {article} {env} task")
    try:
        lookup(spec.template)
    except KeyError as exc:
        raise ValueError(str(exc.args[0])) from None
    return spec


@ENVS.register("web")
class WebEnv(EpisodeEnv):
    """One MiniWoB++ episode at a time on one Chromium page (see the module docstring)."""

    name = "web"
    max_live = 8
    episodes_per_env = 8  # a reset reusing the page costs ~10 ms of browser CPU, a load ~80
    concurrent_calls = True  # a step waits on the browser's answers (and sleeps for holds)
    screen: tuple[int, int] = SCREEN
    """Width and height in CSS pixels of what the env shows (action coordinates are normalised
    to it): MiniWoB's task area."""
    whole_app: bool = False
    """Whether the env's state lives outside the browser too (server processes and their files,
    as the apps env's): a snapshot backend of the browser alone (``criu``) refuses such an env,
    one that dumps the whole namespace (``app-criu``) takes it."""

    @staticmethod
    def validate_options(**options: Any) -> None:
        """Option names and types (``browser`` as a mapping of :class:`BrowserConfig` fields),
        checked before any env or browser is built."""
        config_from_options(WebEnvConfig, options, "web env")

    @staticmethod
    def settings(**options: Any) -> dict[str, Any]:
        """Every option with its default filled in, the Chromium command line an env of these
        options launches (flags are defaults too) and the browser's version
        (:func:`adaroll.envs.env_settings`)."""
        config = config_from_options(WebEnvConfig, options, "web env")
        launch = _launch_config(config)
        command = chromium_command(
            "CHROMIUM",
            user_data_dir="USER_DATA_DIR",
            port=0,
            window_size=launch.window_size,
            extra_args=launch.extra_args,
        )
        executable = find_chromium(config.browser.executable, headless_shell=True)
        settings = {
            **asdict(config),
            "chromium_command": command,
            "chromium": chromium_version(executable),
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
        """``browser``: reuse a running browser (not killed on close), or a mapping of
        :class:`BrowserConfig` fields (``env.options.browser``); else the env launches and owns
        one. ``overrides``: fields of :class:`WebEnvConfig` (e.g. ``screenshot=True``), checked
        by name and type."""
        config = config or WebEnvConfig()
        if isinstance(browser, Mapping):  # env.options.browser from YAML: BrowserConfig fields
            overrides["browser"], browser = browser, None
        if overrides:
            given = config_from_options(WebEnvConfig, overrides, "web env")
            config = replace(config, **{name: getattr(given, name) for name in overrides})
        if not (config.step_timeout_s > 0 and config.reset_timeout_s > 0):
            raise ValueError(
                f"step_timeout_s and reset_timeout_s must be > 0, got "
                f"{config.step_timeout_s} and {config.reset_timeout_s}"
            )
        self.config = config
        self._owns_browser = browser is None
        self._fault: EnvFault | None = None
        """The fault that broke this env, if one did; every later call re-raises it."""
        self._in_call = False
        if browser is None:
            browser = BrowserProcess.launch(_launch_config(config))
        self._browser = browser
        self._cdp: CDPSession | None = None
        self._prelude = prelude_js(config)
        self._prelude_id: str | None = None
        self._task: TaskSpec | None = None
        self._instruction = ""
        self._steps = 0
        self._done = False
        self._success = False
        self._max_steps = 0
        self.last_step_seconds = 0.0
        self.last_unsettled = 0
        self._page_template: str | None = None
        """The task template the page holds (None: unknown, e.g. a restored browser)."""
        self._page_shell: str | None = None
        """``__adaroll.shell()`` right after the page's first episode start."""
        self.reset_counts = {"loaded": 0, "reused": 0, "reuse_refused": 0}
        """Resets that loaded the page, that reused it, and reuses refused (then loaded)."""
        self.pointer_parked = False
        """The pointer is known to rest where :func:`park` leaves it (a reset then skips the
        move, which waits for a frame; every pointer action but ``hover`` ends parked)."""
        try:
            self.reconnect()
        except BaseException:
            self.close()
            raise

    # -- connection -----------------------------------------------------------------------------
    @property
    def browser(self) -> BrowserProcess:
        return self._browser

    @property
    def cdp(self) -> CDPSession:
        """The live DevTools session (privileged; reconnects when needed)."""
        if self._cdp is None or self._cdp.closed:
            self.reconnect()
        assert self._cdp is not None
        return self._cdp

    def reconnect(self) -> None:
        """Open a fresh DevTools session and re-enable what the env uses. Call after the
        browser process was restored from a snapshot (its sockets are gone)."""
        if self._cdp is not None:
            self._cdp.close()
        self._cdp = self._browser.connect()
        cdp = self._cdp
        # a page loaded before this session (e.g. restored) already has the prelude (it returns
        # at once then); a blank one gets it
        _, added, evaluated = cdp.call_all(
            ("Page.enable", {}),
            ("Page.addScriptToEvaluateOnNewDocument", {"source": self._prelude}),
            ("Runtime.evaluate", {"expression": self._prelude, "returnByValue": True}),
        )
        evaluation_value(evaluated)
        self._prelude_id = added.get("identifier")
        if self.config.screenshot:
            emulate_capture_viewport(self)

    # -- GUIEnv ---------------------------------------------------------------------------------
    def warm_for(self, task: TaskSpec) -> bool:
        """The page holds ``task``'s template, so a reset can reuse it (``reuse_page``)."""
        return (
            self.config.reuse_page
            and not self.config.screenshot
            and self._page_template == task.template
        )

    def _no_episode(self) -> str:
        return "no episode yet: call reset(options={'task': ...})"

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        options = options or {}
        if "task" not in options:
            raise ValueError("WebEnv.reset needs options={'task': TaskSpec('web', NAME, SEED)}")
        task = coerce_task(options["task"], seed)
        with self._call("reset", self.config.reset_timeout_s):
            return self._reset(task)

    def _reset(self, task: TaskSpec) -> tuple[Observation, dict[str, Any]]:
        meta = get_task(task.template)
        cdp = self.cdp
        reuse = self.config.reuse_page and not self.config.screenshot
        reused = False
        if reuse and self._page_template == task.template:
            cdp.evaluate("__adaroll.endEpisode()")
            self._start_episode(task)
            reused = cdp.evaluate("__adaroll.shell()") == self._page_shell
            if reused:
                self.reset_counts["reused"] += 1
            else:  # the last episode left a trace outside what the task rebuilds: reload
                self.reset_counts["reuse_refused"] += 1
        if not reused:
            self._page_template = None  # until the new page has loaded
            self.pointer_parked = False  # a new document: park for it
            self._load_page(task_url(task.template))
            self._start_episode(task)
            self._page_template = task.template
            self._page_shell = cdp.evaluate("__adaroll.shell()") if reuse else None
            self.reset_counts["loaded"] += 1
        self._settle()
        self._task = task
        self._instruction = str(cdp.evaluate(UTTERANCE_JS))
        self._steps = 0
        self._done = False
        self._success = False
        self._max_steps = self.config.max_steps or meta.max_steps
        obs = self.observe()
        return obs, {
            "instruction": self._instruction,
            "task": task.id,
            "max_steps": self._max_steps,
        }

    def _start_episode(self, task: TaskSpec) -> None:
        if not self.pointer_parked:
            park(self)  # hover state must not depend on earlier episodes
        self.cdp.evaluate("__adaroll.restartClock()")
        self.cdp.evaluate(
            START_EPISODE_JS % (json.dumps(task.seed), json.dumps(self.config.data_mode))
        )
        self._wait_until("WOB_TASK_READY !== false", timeout=10.0)

    def step(self, action: Action) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        if self._task is None:
            raise RuntimeError("call reset before step")
        if self._done:
            raise RuntimeError("the episode is over; call reset")
        if not isinstance(action, Action):
            raise InvalidActionError(f"expected an Action, got {type(action).__name__}")
        with self._call("step", self.config.step_timeout_s):
            return self._step(action)

    def _step(self, action: Action) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        assert self._task is not None
        t0 = time.perf_counter()
        agent_done = action.kind is ActionKind.DONE
        if not agent_done:
            execute(self, action)
            # wheel scrolls and drags are applied by the compositor: wait for two frames
            self._settle(frames=2 if action.kind is ActionKind.SWIPE else 0)
        self._steps += 1
        status = self.page_status()
        success = status["done"] and status["raw_reward"] > 0
        terminated = bool(status["done"] or agent_done)
        truncated = not terminated and self._steps >= self._max_steps
        self._done = terminated or truncated
        self._success = bool(success)
        obs = self.observe()
        self.last_step_seconds = time.perf_counter() - t0
        info: dict[str, Any] = {
            "instruction": self._instruction,
            "raw_reward": status["raw_reward"],
            "reason": status["reason"],
            "steps": self._steps,
            "unsettled": 0 if agent_done else self.last_unsettled,
        }
        if self._done:
            info["success"] = self._success
        return obs, (1.0 if success else 0.0), terminated, truncated, info

    def observe(self) -> Observation:
        with self._call("observe", self.config.step_timeout_s):
            raw = self.cdp.evaluate(
                f"__adaroll.elements({int(self.config.max_elements)}, {SCREEN[0]}, {SCREEN[1]}, "
                f"{dom.MAX_TEXT})"
            )
            screenshot = self.screenshot() if self.config.screenshot else None
        return Observation(dom.parse_elements(raw), SCREEN, screenshot)

    def close(self) -> None:
        if self._cdp is not None:
            self._cdp.close()
            self._cdp = None
        if self._owns_browser and self._browser is not None:
            self._browser.kill()

    def __enter__(self) -> WebEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- episode state (for snapshot backends) --------------------------------------------------
    def episode_state(self) -> dict[str, Any]:
        """Bookkeeping that lives outside the browser; with a restored browser process and
        :meth:`attach`, it recreates this env's episode."""
        return {
            "task": self.task.id,
            "instruction": self._instruction,
            "steps": self._steps,
            "done": self._done,
            "success": self._success,
            "max_steps": self._max_steps,
        }

    @classmethod
    def attach(
        cls,
        browser: BrowserProcess,
        episode: dict[str, Any],
        config: WebEnvConfig | None = None,
        *,
        owns_browser: bool = True,
        **overrides: Any,
    ) -> WebEnv:
        """An env around an already-running browser whose page holds ``episode`` (e.g. a
        CRIU-restored branch): connects, re-enables domains, restores the bookkeeping."""
        env = cls(config, browser=browser, **overrides)
        env._owns_browser = owns_browser
        env._task = TaskSpec.from_id(episode["task"])
        env._instruction = str(episode["instruction"])
        env._steps = int(episode["steps"])
        env._done = bool(episode["done"])
        env._success = bool(episode["success"])
        env._max_steps = int(episode["max_steps"])
        return env

    # -- privileged helpers (experts, tests, verification) --------------------------------------
    def evaluate(self, expression: str, *, await_promise: bool = False) -> Any:
        """Evaluate JavaScript in the task page. PRIVILEGED: experts/tests only."""
        with self._call("evaluate", self.config.step_timeout_s):
            return self.cdp.evaluate(expression, await_promise=await_promise)

    def collect_garbage(self) -> None:
        """Let V8 collect garbage and Chromium drop its caches (a critical memory-pressure
        signal): nothing the page can observe changes, and the browser's memory - what a CRIU
        snapshot taken next must copy - shrinks. PRIVILEGED: snapshot backends."""
        with self._call("collect_garbage", self.config.step_timeout_s):
            self.cdp.call_all(
                ("HeapProfiler.collectGarbage", {}),
                ("Memory.simulatePressureNotification", {"level": "critical"}),
            )

    def page_status(self) -> dict[str, Any]:
        """MiniWoB's episode status: done, raw_reward, reason, ready. PRIVILEGED."""
        with self._call("page_status", self.config.step_timeout_s):
            return dict(self.cdp.evaluate(STATUS_JS))

    def render(self) -> Any:
        """The current screen as an H x W x 3 uint8 array (Gymnasium's ``rgb_array``)."""
        return self.screenshot()

    def screenshot(self) -> Any:
        """The task area as an H x W x 3 uint8 numpy array."""
        with self._call("screenshot", self.config.step_timeout_s):
            data = capture_png(self)
        return decode_png(data)

    # -- internals ------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _call(self, what: str, seconds: float) -> Iterator[None]:
        """Run one public env call under a total time bound and turn browser failures into
        :class:`EnvFault`/:class:`EnvTimeout`. Why a fault poisons the env: after a timeout the
        DevTools session may still deliver the late answer, and after a crash there is nothing
        to talk to, so no later call could be trusted. Nested calls (step -> observe) share the
        outermost bound."""
        if self._fault is not None:
            raise EnvFault(f"web env unusable after an earlier fault: {self._fault}")
        if self._in_call:
            yield
            return
        self._in_call = True
        try:
            with self.cdp.deadline(seconds):
                yield
        except CDPTimeoutError as exc:
            self._fault = EnvTimeout(
                f"web env {what} did not finish within {seconds:g} s "
                f"({self._browser_state()}): {exc}"
            )
            raise self._fault from exc
        except (CDPError, BrowserUnavailableError, OSError) as exc:
            self._fault = EnvFault(f"web env {what} failed ({self._browser_state()}): {exc}")
            raise self._fault from exc
        finally:
            self._in_call = False

    def _browser_state(self) -> str:
        browser = self._browser
        return f"browser pid {browser.pid} {'alive' if browser.alive() else 'dead'}"

    def _load_page(self, url: str) -> None:
        cdp = self.cdp
        cdp.clear_events()
        result = cdp.call("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise CDPError(f"cannot load {url}: {result['errorText']}")
        frame = result.get("frameId")
        cdp.wait_event("Page.loadEventFired", timeout=20.0)
        del frame
        self._wait_until(PAGE_READY_JS, timeout=10.0)
        self.cdp.evaluate("__adaroll.stripHover()")
        self.cdp.evaluate("__adaroll.preloadImages()", await_promise=True, timeout=20.0)

    def _wait_until(self, condition: str, *, timeout: float) -> None:
        js = (
            "new Promise((resolve, reject) => { const t0 = performance.now(); const chk = () => {"
            f" let ok = false; try {{ ok = !!({condition}); }} catch (e) {{}}"
            f" if (ok) resolve(true); else if (performance.now() - t0 > {timeout * 1000})"
            " resolve(false); else setTimeout(chk, 2); }; chk(); })"
        )
        if not self.cdp.evaluate(js, await_promise=True, timeout=timeout + 5):
            raise CDPError(f"page condition not met within {timeout} s: {condition.strip()[:80]}")

    def pending_work(self) -> int:
        """Callbacks the settle policy would wait for now (short timers, animation frames and,
        on the apps, requests in flight); 0 on a settled page."""
        return int(self.cdp.evaluate("__adaroll.pending.size + __adaroll.rafs.size") or 0)

    def settle(self) -> int:
        """Wait as a step does until the page is settled; the callbacks still pending at the
        settle bound (0 = settled)."""
        return self._settle()

    def _settle(self, frames: int = 0) -> int:
        """Run the settle policy; returns how many callbacks were still pending at its time
        limit (0 = settled), also kept in ``info["unsettled"]`` of the step."""
        pending = self.cdp.evaluate(
            f"__adaroll.settle({int(self.config.settle_timeout_ms)}, {frames})",
            await_promise=True,
            timeout=30.0,
        )
        self.last_unsettled = int(pending or 0)
        return self.last_unsettled
