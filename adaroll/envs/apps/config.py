"""The apps env's knobs (:class:`AppsEnvConfig`) and the apps it runs."""

from __future__ import annotations

from dataclasses import dataclass

from adaroll.envs.web.env import WebEnvConfig

APP_NAMES = ("mail", "shop", "calendar", "tracker", "notes", "admin")
"""Every app, in the app switcher's order (ports ``base_port + index``)."""
APP_TITLES = {
    "mail": "Mail",
    "shop": "Shop",
    "calendar": "Calendar",
    "tracker": "Tracker",
    "notes": "Notes",
    "admin": "Admin",
}
LAPTOP = (1280, 800)


@dataclass(frozen=True)
class AppsEnvConfig(WebEnvConfig):
    """Knobs of the apps env: every :class:`~adaroll.envs.web.env.WebEnvConfig` field (the
    settle policy, time bounds, the browser) plus the apps' own."""

    viewport: tuple[int, int] = LAPTOP
    """The screen in CSS pixels (a laptop's, 1280 x 800): the browser window, and what action
    coordinates are normalised to."""
    latency_scale: float = 1.0
    """Multiplies the servers' simulated latency (docs/apps.md, "Latency"; 0: none)."""
    base_port: int = 8101
    """The first app's port inside the env's network namespace (each app has the next)."""
    server_python: str | None = None
    """The interpreter the servers run with (standard library only, as the browser's account);
    None: this process's, else the system's ``python3`` (:func:`~adaroll.envs.apps.launch.
    server_code`)."""
    server_mode: str = "shared"
    """``shared``: one threaded server process serves every app (each on its own port, with
    its own database); ``per-app``: a server process per app. Shared keeps a whole-app CRIU
    image about 70 MB smaller (each Python process adds ~12 MB); per-app confines a crash to
    one app (:mod:`~adaroll.envs.apps.appserver.supervisor`)."""
    max_elements: int = 100
    """At most this many UI elements per observation (an app page lists more than a MiniWoB
    task area)."""

    def __post_init__(self) -> None:
        if self.latency_scale < 0:
            raise ValueError(f"latency_scale must be >= 0, got {self.latency_scale}")
        if not 1024 <= self.base_port <= 65535 - len(APP_NAMES):
            raise ValueError(
                f"base_port must leave room for {len(APP_NAMES)} ports, got {self.base_port}"
            )
        if self.server_mode not in ("shared", "per-app"):
            raise ValueError(f"server_mode must be shared or per-app, got {self.server_mode!r}")
        if min(self.viewport) < 200:
            raise ValueError(f"viewport must be at least 200 x 200, got {self.viewport}")

    def ports(self) -> dict[str, int]:
        return {name: self.base_port + i for i, name in enumerate(APP_NAMES)}

    def url(self, app: str, view: str = "") -> str:
        return f"http://127.0.0.1:{self.ports()[app]}/{view}"
