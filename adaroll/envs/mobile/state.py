"""The phone's immutable state: per-app data, the navigation back stack, per-screen UI state.

Every step builds a new :class:`Phone` that shares all unchanged parts with the previous one
(copy-on-write on frozen dataclasses and tuples), so a snapshot is just a reference and a
branch is one object construction. A phone caches its rendered :class:`~.screen.View`; the
cache is never compared or copied.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True, slots=True)
class Route:
    """One entry of the back stack: a screen of an app plus the screen's transient UI state.

    ``arg`` names what the screen shows (a record uid, a query, ...); ``fields`` holds the text
    of its text fields (drafts are lost on back, as on a phone); ``focus`` is the focused field
    (the keyboard is up while it is set); ``dialog`` is an open dialog as plain data.
    """

    app: str
    screen: str
    arg: Any = None
    scroll: int = 0
    fields: tuple[tuple[str, str], ...] = ()
    focus: str | None = None
    dialog: tuple[Any, ...] | None = None

    def field(self, name: str, default: str = "") -> str:
        for key, value in self.fields:
            if key == name:
                return value
        return default

    def with_field(self, name: str, value: str) -> Route:
        fields = tuple(kv for kv in self.fields if kv[0] != name) + ((name, value),)
        return Route(self.app, self.screen, self.arg, self.scroll, fields, self.focus, self.dialog)

    def with_fields(self, **values: str) -> Route:
        route = self
        for name, value in values.items():
            route = route.with_field(name, value)
        return route


@dataclass(frozen=True, slots=True)
class Phone:
    """Everything the phone holds: ``apps`` (an :class:`~.world.Apps`) and the back stack.

    An empty stack is the home launcher. ``open_app`` starts an app at its root screen.
    """

    apps: Any
    stack: tuple[Route, ...] = ()
    view_cache: Any = field(default=None, init=False, repr=False, compare=False)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Phone, (self.apps, self.stack))  # the view cache (closures) is rebuilt on demand

    @property
    def top(self) -> Route | None:
        return self.stack[-1] if self.stack else None

    @property
    def screen(self) -> Route:
        """The top route, for handlers (they only run while an app screen is open)."""
        if not self.stack:
            raise RuntimeError("no app screen is open (the phone is at home)")
        return self.stack[-1]

    def app(self, name: str) -> Any:
        return getattr(self.apps, name)

    def set_app(self, name: str, state: Any) -> Phone:
        return Phone(replace(self.apps, **{name: state}), self.stack)

    def set_top(self, route: Route) -> Phone:
        return Phone(self.apps, self.stack[:-1] + (route,))

    def update_top(self, **changes: Any) -> Phone:
        top = self.top
        assert top is not None, "no screen is open"
        return Phone(self.apps, self.stack[:-1] + (replace(top, **changes),))

    def push(self, route: Route) -> Phone:
        return Phone(self.apps, self.stack + (route,))

    def pop(self) -> Phone:
        return Phone(self.apps, self.stack[:-1])

    def with_stack(self, stack: tuple[Route, ...]) -> Phone:
        return Phone(self.apps, stack)


def next_uid(records: tuple[Any, ...]) -> int:
    """A uid larger than every record's: records keep their identity across edits/deletes."""
    return max((r.uid for r in records), default=0) + 1
