"""The seam between the ``criu`` backend and the web environment: the browser directories the
backend takes over at a dump (and gives back), and the :class:`WebEnv` subclass a restored
branch is (built on first use: the module stays importable without the browser stack)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from adaroll.envs.web.browser import BrowserProcess
    from adaroll.envs.web.env import WebEnv


def disown_dirs(browser: BrowserProcess) -> tuple[str, ...]:
    """Take over the directories ``browser`` would remove when killed (its host directory,
    parent of ``state_dir``); the crash janitor still removes them if this process dies."""
    return tuple(browser.disown_dirs())


def return_dirs(browser: BrowserProcess, dirs: tuple[str, ...]) -> bool:
    """Give ``dirs`` back to a still-running ``browser`` (it removes them when killed)."""
    if not browser.alive():
        return False
    browser.own_dirs(dirs)
    return True


def branch_env_class() -> type[WebEnv]:
    """``WebEnv`` subclass for branches (built lazily: the web extras are optional)."""
    global _BRANCH_CLASS
    if _BRANCH_CLASS is None:
        from adaroll.envs.web.env import WebEnv

        class CriuBranchEnv(WebEnv):
            """A :class:`WebEnv` on a CRIU-restored browser; closing it kills the branch and
            returns its pool slot. ``restore_info`` holds timings and the verification."""

            restore_info: dict[str, Any]
            _on_close: Any = None

            def close(self) -> None:
                try:
                    super().close()
                finally:
                    callback, self._on_close = self._on_close, None
                    if callback is not None:
                        callback()

        _BRANCH_CLASS = CriuBranchEnv
    return _BRANCH_CLASS


_BRANCH_CLASS: Any = None
