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


class BranchClose:
    """Mixin of a restored branch's env class: closing it kills the branch and runs the
    backend's ``_on_close`` (returns the pool slot and the image reference)."""

    restore_info: dict[str, Any]
    _on_close: Any = None

    def close(self) -> None:
        try:
            super().close()  # type: ignore[misc]
        finally:
            callback, self._on_close = self._on_close, None
            if callback is not None:
                callback()


def branch_class_of(env_class: type[Any]) -> type[Any]:
    """``env_class`` with :class:`BranchClose` (one class per env class)."""
    cls = _BRANCH_CLASSES.get(env_class)
    if cls is None:
        cls = type(f"CriuBranch{env_class.__name__}", (BranchClose, env_class), {})
        _BRANCH_CLASSES[env_class] = cls
    return cls


def branch_env_class() -> type[WebEnv]:
    """``WebEnv`` subclass for branches (built lazily: the web extras are optional)."""
    from adaroll.envs.web.env import WebEnv

    return branch_class_of(WebEnv)


_BRANCH_CLASSES: dict[type[Any], type[Any]] = {}
