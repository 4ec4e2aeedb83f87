"""What every app provides: a name, its root screen, a seeded data generator and a view."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from random import Random
from typing import Any

from adaroll.envs.mobile.screen import ViewBuilder
from adaroll.envs.mobile.state import Phone, Route


@dataclass(frozen=True)
class App:
    """An app of the simulated phone.

    ``attr`` is the app's field on :class:`~adaroll.envs.mobile.world.Apps`; ``view`` draws the
    top route of the app into a builder (dialogs included); ``generate`` makes the app's seeded
    initial data from an RNG and the data of the apps generated before it (Contacts comes
    before Messages and Mail, whose threads and senders are contacts).
    """

    name: str
    attr: str
    root: Route
    generate: Callable[[Random, dict[str, Any]], Any]
    view: Callable[[Phone, Route, ViewBuilder], None]
