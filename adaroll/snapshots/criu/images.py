"""What the ``criu`` backend keeps per image: the record of a dump (:class:`Image`), the pins
that keep a browser's ``state_dir`` mount point alive on the host, the manifest that finds a
damaged image file by one ``stat``, and the web-env config a branch is rebuilt with."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adaroll.snapshots.base import SnapshotError
from adaroll.snapshots.criu.config import IMAGE_SUBDIR, STATE_SUBDIR

if TYPE_CHECKING:
    from adaroll.envs.web.env import WebEnvConfig


@dataclass
class StatePin:
    """Keeps a ``state_dir`` mount point on the host alive while images need it."""

    state_dir: str
    dirs: tuple[str, ...] = ()
    """Directories to remove when released (taken from the browser, or created here)."""
    browser: Any = None
    """The original browser (weakly referenced) the dirs came from, if any."""
    users: int = 0


@dataclass
class Image:
    id: str
    dir: Path
    state_dir: str
    port: int
    episode: dict[str, Any]
    env_config: Any
    manifest: dict[str, Any]
    external_netns: bool = False
    page_url: str = ""
    """The page target's DevTools WebSocket URL, which a branch keeps ("" for older images)."""
    ids: tuple[int, int] = (0, 0)
    """uid and gid of the dumped browser: criu restores it as that account (root for 0)."""
    owned: bool = True
    refs: int = 1
    branches: int = 0

    @property
    def img(self) -> Path:
        return self.dir / IMAGE_SUBDIR

    @property
    def state_copy(self) -> Path:
        return self.dir / STATE_SUBDIR


def image_manifest(snapdir: Path) -> dict[str, list[int]]:
    """Relative path -> [size, mtime_ns] of every regular file of the image and the copied
    state. Why the mtime: a file damaged in place keeps its size; nothing writes to an image
    after the dump (restores read it, branches write to their overlay's upper layer), so a
    changed mtime means a changed file - found by one ``stat`` instead of hashing ~250 MB."""
    out: dict[str, list[int]] = {}
    for sub in (IMAGE_SUBDIR, STATE_SUBDIR):
        base = snapdir / sub
        for dirpath, _, files in os.walk(base):
            for name in files:
                path = Path(dirpath, name)
                with contextlib.suppress(OSError):
                    st = path.lstat()
                    if path.is_file() and not path.is_symlink():
                        out[str(path.relative_to(snapdir))] = [st.st_size, st.st_mtime_ns]
    return out


def check_manifest(snapdir: Path, manifest: dict[str, Any], snap_id: str) -> None:
    """Fail with the file's name when an image/state file is missing, has changed size or was
    modified after the dump. (Manifests of older images hold the size alone.)"""
    base = str(snapdir)
    for rel, recorded in manifest.items():
        size, mtime = (recorded, None) if isinstance(recorded, int) else recorded
        path = os.path.join(base, rel)  # (os.stat on a str: a third of Path.stat's time)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise SnapshotError(f"criu snapshot {snap_id}: image file {path} is missing") from None
        if st.st_size != size:
            raise SnapshotError(
                f"criu snapshot {snap_id}: image file {path} is corrupt "
                f"(size {st.st_size}, recorded {size})"
            )
        if mtime is not None and st.st_mtime_ns != mtime:
            raise SnapshotError(
                f"criu snapshot {snap_id}: image file {path} is corrupt (modified after the dump)"
            )


def env_config_to_dict(config: Any) -> dict[str, Any]:
    with contextlib.suppress(TypeError):
        return dataclasses.asdict(config)
    return {}


def env_config_from_dict(data: dict[str, Any] | None) -> WebEnvConfig:
    """Rebuild a :class:`WebEnvConfig` from :func:`env_config_to_dict` output (JSON lists ->
    tuples); unknown fields are dropped."""
    from adaroll.envs.web.browser import BrowserConfig
    from adaroll.envs.web.env import WebEnvConfig

    data = dict(data or {})
    browser = data.pop("browser", None) or {}
    bfields = {f.name for f in dataclasses.fields(BrowserConfig)}
    bconf: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in browser.items() if k in bfields
    }
    efields = {f.name for f in dataclasses.fields(WebEnvConfig)}
    econf = {k: v for k, v in data.items() if k in efields}
    return WebEnvConfig(browser=BrowserConfig(**bconf), **econf)


def ids_from_meta(value: Any, snap_id: str) -> tuple[int, int]:
    """``browser_ids`` of a snapshot's meta: whom criu restores the browser as (absent in
    images of root browsers made before issue 31: root)."""
    if value is None:
        return (0, 0)
    try:
        uid, gid = (int(v) for v in value)
    except (TypeError, ValueError):
        raise SnapshotError(
            f"criu snapshot {snap_id}: meta browser_ids must be [uid, gid], got {value!r}"
        ) from None
    return uid, gid
