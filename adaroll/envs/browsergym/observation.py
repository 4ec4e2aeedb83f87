"""BrowserGym's accessibility tree as AdaRoll's element list.

Input: a BrowserGym observation's ``axtree_object`` (Chromium's full accessibility tree, nodes
tagged with BrowserGym ids, ``browsergym_id``), ``extra_element_properties`` (per id:
``visibility`` - the visible fraction -, ``bbox`` = [x, y, width, height] in screenshot pixels,
i.e. CSS pixels times the page's ``_bgym_scale_factor`` -, ``clickable``) and
``focused_element_bid``.

Output: :class:`~adaroll.envs.base.UIElement` tuples under the rules of the web env
(:mod:`adaroll.envs.web.dom`), read from the tree instead of the DOM:

* ids are positions in the list, which is in document order (a depth-first walk of the tree);
* an element is listed when it is *interactive* - an ARIA widget role (button, link, textbox,
  checkbox, ...) or BrowserGym's ``clickable`` - or has text of its own (its direct
  ``StaticText`` children); text inside an interactive element folds into it, and so does
  everything inside a widget (a clickable image in a button is the button); a label wrapping
  a control gives the control its text (Chromium already names the control by it) instead of
  being listed; a clickable container without text whose targets are listed separately is not
  listed itself;
* ``bounds`` are the box divided by the scale factor, clipped to the screen, normalised to it
  and rounded to 4 decimals; an element is visible when BrowserGym's ``visibility`` is above 0
  and its clipped box is at least 1 x 1 CSS pixel;
* ``role`` is the tree's role with Chromium's internal names mapped to the web env's
  (``StaticText``/``paragraph``/``generic`` with text -> ``text``, ``LabelText`` -> ``label``,
  ``image`` -> ``icon``, ``gridcell`` -> ``cell``); a clickable element without a widget role
  is ``generic`` as in the web env;
* ``text``: a widget's accessible name (its value for text fields, their placeholder when
  empty), otherwise its own text; whitespace-collapsed, at most ``MAX_TEXT`` characters;
* ``flags``: ``enabled`` + ``clickable`` for interactive elements (no ``enabled`` when
  disabled), ``checked``, ``selected``, ``focused`` (BrowserGym's focused id), ``editable``
  (Chromium's ``editable`` and not read-only);
* at most ``max_elements``: interactive elements kept first, then text, in document order.

Differences from the web env, all because the tree does not carry the information: a box is
not clipped by a scrolling ancestor (an element scrolled fully out of view has ``visibility``
0 and is dropped, a partly scrolled one keeps its whole box), and no element is flagged
``scrollable``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from adaroll.envs.base import UIElement
from adaroll.envs.web.dom import MAX_ELEMENTS, MAX_TEXT

WIDGET_ROLES = frozenset(
    {
        "button",
        "link",
        "checkbox",
        "radio",
        "tab",
        "menuitem",
        "option",
        "treeitem",
        "slider",
        "spinbutton",
        "textbox",
        "combobox",
        "listbox",
        "switch",
        "searchbox",
        "menuitemcheckbox",
        "menuitemradio",
        "PopUpButton",
        "ToggleButton",
    }
)
TEXT_FIELD_ROLES = frozenset({"textbox", "searchbox", "combobox", "spinbutton"})
ROLE_NAMES = {
    "StaticText": "text",
    "paragraph": "text",
    "generic": "text",
    "Section": "text",
    "LabelText": "label",
    "image": "icon",
    "img": "icon",
    "gridcell": "cell",
    "columnheader": "cell",
    "rowheader": "cell",
    "PopUpButton": "combobox",
    "ToggleButton": "button",
    "Canvas": "canvas",
    "SvgRoot": "graphic",
}
SKIPPED_ROLES = frozenset(
    {
        "InlineTextBox",
        "LineBreak",
        "none",
        "RootWebArea",
        "WebArea",
        "Iframe",
        "IframePresentational",
    }
)
_SPACE = re.compile(r"\s+")


def _collapse(text: str) -> str:
    return _SPACE.sub(" ", text or "").strip()


def _value(field: Any) -> Any:
    return field.get("value") if isinstance(field, dict) else None


@dataclass
class _Node:
    raw: dict[str, Any]
    children: list[_Node]

    @property
    def role(self) -> str:
        return str(_value(self.raw.get("role")) or "")

    @property
    def name(self) -> str:
        return str(_value(self.raw.get("name")) or "")

    @property
    def bid(self) -> str | None:
        bid = self.raw.get("browsergym_id")
        return None if bid is None else str(bid)

    @property
    def ignored(self) -> bool:
        return bool(self.raw.get("ignored"))

    def prop(self, name: str) -> Any:
        for p in self.raw.get("properties", ()):
            if p.get("name") == name:
                return _value(p.get("value"))
        return None


def _tree(axtree: dict[str, Any]) -> _Node | None:
    nodes = axtree.get("nodes") or []
    if not nodes:
        return None
    by_id = {str(n["nodeId"]): n for n in nodes}
    built: dict[str, _Node] = {}

    def build(node_id: str) -> _Node:
        raw = by_id[node_id]
        node = _Node(raw, [])
        built[node_id] = node
        node.children = [
            build(str(c))
            for c in raw.get("childIds", ())
            if str(c) in by_id and str(c) not in built
        ]
        return node

    root = next((n for n in nodes if not n.get("parentId")), nodes[0])
    return build(str(root["nodeId"]))


class _Extractor:
    def __init__(
        self,
        props: dict[str, Any],
        focused: str | None,
        screen: tuple[int, int],
        scale: float,
        max_text: int,
    ) -> None:
        self.props = props
        self.focused = focused
        self.width, self.height = screen
        self.scale = scale
        self.max_text = max_text

    def interactive(self, node: _Node) -> bool:
        if node.ignored or node.role in SKIPPED_ROLES or node.role == "StaticText":
            return False
        if node.role == "LabelText" and self.has_interactive(node, labels=False):
            return False  # a label wrapping a control: the control is the target
        if node.role in WIDGET_ROLES:
            return True
        extra = self.props.get(node.bid or "") or {}
        return bool(extra.get("clickable"))

    def has_interactive(self, node: _Node, *, labels: bool = True) -> bool:
        for child in node.children:
            if (
                self.interactive(child) if labels else child.role in WIDGET_ROLES
            ) or self.has_interactive(child, labels=labels):
                return True
        return False

    def own_text(self, node: _Node) -> str:
        return _collapse(" ".join(c.name for c in node.children if c.role == "StaticText"))

    def text_outside(self, node: _Node) -> str:
        """Text of ``node``'s subtree without the subtrees of interactive descendants."""
        parts = []
        for child in node.children:
            if child.role == "StaticText":
                parts.append(child.name)
            elif not self.interactive(child):
                parts.append(self.text_outside(child))
        return _collapse(" ".join(parts))

    def box(self, node: _Node) -> tuple[float, float, float, float] | None:
        extra = self.props.get(node.bid or "") or {}
        bbox = extra.get("bbox")
        if not bbox or not (extra.get("visibility") or 0) > 0:
            return None
        x, y, w, h = (float(v) / self.scale for v in bbox)
        left, top = max(x, 0.0), max(y, 0.0)
        right, bottom = min(x + w, float(self.width)), min(y + h, float(self.height))
        if right - left < 1 or bottom - top < 1:
            return None
        return (
            round(left / self.width, 4),
            round(top / self.height, 4),
            round(right / self.width, 4),
            round(bottom / self.height, 4),
        )

    def text_of(self, node: _Node, interactive: bool) -> str:
        if node.role in TEXT_FIELD_ROLES:
            value = _value(node.raw.get("value"))
            text = str(value) if value else str(node.prop("placeholder") or node.name or "")
        elif node.role in WIDGET_ROLES:
            text = node.name or self.text_outside(node)
        elif interactive:
            text = self.text_outside(node) or node.name
        elif node.role in ("image", "img"):
            text = node.name
        else:
            text = self.own_text(node)
        return _collapse(text)[: self.max_text]

    def flags(self, node: _Node, interactive: bool) -> frozenset[str]:
        flags = set()
        if interactive:
            flags.add("clickable")
            if not node.prop("disabled"):
                flags.add("enabled")
        if str(node.prop("checked")).lower() == "true":
            flags.add("checked")
        if node.prop("selected") is True:
            flags.add("selected")
        if node.bid is not None and node.bid == self.focused:
            flags.add("focused")
        if node.prop("editable") and not node.prop("readonly"):
            flags.add("editable")
        return frozenset(flags)

    def walk(
        self,
        node: _Node,
        in_interactive: bool,
        in_control: bool = False,
    ) -> Iterator[tuple[bool, UIElement]]:
        # inside a widget (button, link, ...) everything folds into it, as in the web env
        interactive = not in_control and self.interactive(node)
        wraps_control = node.role == "LabelText" and self.has_interactive(node, labels=False)
        if (
            not node.ignored
            and node.bid is not None
            and node.role not in SKIPPED_ROLES
            and not wraps_control
        ):
            text = self.text_of(node, interactive)
            wrapper = (
                interactive
                and node.role not in WIDGET_ROLES
                and not text
                and self.has_interactive(node)
            )
            icon = node.role in ("image", "img")
            listed = (interactive and not wrapper) or (not in_interactive and (bool(text) or icon))
            box = self.box(node) if listed else None
            if box is not None:
                role = ROLE_NAMES.get(node.role, node.role)
                if interactive and node.role not in WIDGET_ROLES and role == "text":
                    role = "generic"
                yield (
                    interactive,
                    UIElement(
                        -1,
                        role,
                        text or (node.name if icon else ""),
                        box,
                        self.flags(node, interactive),
                    ),
                )
        control = in_control or (interactive and node.role in WIDGET_ROLES)
        for child in node.children:
            yield from self.walk(child, in_interactive or interactive, control)


def axtree_elements(
    obs: dict[str, Any],
    screen: tuple[int, int],
    *,
    scale: float = 1.0,
    max_elements: int = MAX_ELEMENTS,
    max_text: int = MAX_TEXT,
) -> tuple[UIElement, ...]:
    """The element list of BrowserGym observation ``obs`` (see the module docstring).
    ``screen``: the task area in CSS pixels; ``scale``: the page's ``_bgym_scale_factor``."""
    root = _tree(obs.get("axtree_object") or {})
    if root is None:
        return ()
    extractor = _Extractor(
        obs.get("extra_element_properties") or {},
        obs.get("focused_element_bid") or None,
        screen,
        scale,
        max_text,
    )
    found = list(extractor.walk(root, False))
    if len(found) > max_elements:
        keep = {i for i, (inter, _) in enumerate(found) if inter}
        keep = set(sorted(keep)[:max_elements])
        for i, (inter, _) in enumerate(found):
            if not inter and len(keep) < max_elements:
                keep.add(i)
        found = [f for i, f in enumerate(found) if i in keep]
    return tuple(UIElement(i, e.role, e.text, e.bounds, e.flags) for i, (_, e) in enumerate(found))
