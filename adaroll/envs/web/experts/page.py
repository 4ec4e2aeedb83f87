"""What every expert builds on: the registry (:data:`EXPERTS`, filled by the :func:`expert`
decorator), :class:`Page` - privileged read access to the task page, producing Actions only -
and its in-page JavaScript helper library (:data:`HELPERS_JS`, ``window.__adx``).

The underscored helpers at the end (``_quoted``, ``_sel``, ``_toggle_then``, ``_fill_then``)
are shared by the page-family modules of this package and by nothing outside it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from adaroll.actions import Action, ActionKind

if TYPE_CHECKING:
    from adaroll.envs.web.env import WebEnv


class ExpertError(RuntimeError):
    """The expert cannot plan an action from the current page (unexpected state)."""


HELPERS_JS = r"""
(() => {
  if (window.__adx) return;
  const W = 160, H = 210;
  const X = window.__adx = {};
  X.all = (sel, root) => Array.from((root || document).querySelectorAll(sel));
  X.q = (sel, root) => (root || document).querySelector(sel);
  X.text = (el) => el ? (el.textContent || '').replace(/\s+/g, ' ').trim() : '';
  X.shown = (el) => !!el && el.getClientRects().length > 0 &&
                    getComputedStyle(el).visibility !== 'hidden';
  X.box = (el) => {
    const r = el.getBoundingClientRect();
    let l = Math.max(r.left, 0), t = Math.max(r.top, 0);
    let rr = Math.min(r.right, W), b = Math.min(r.bottom, H);
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      const cs = getComputedStyle(p);
      if (cs.overflowX !== 'visible' || cs.overflowY !== 'visible') {
        const pr = p.getBoundingClientRect();
        l = Math.max(l, pr.left); t = Math.max(t, pr.top);
        rr = Math.min(rr, pr.right); b = Math.min(b, pr.bottom);
      }
    }
    return (rr - l >= 1 && b - t >= 1) ? [l, t, rr, b] : null;
  };
  // a point (CSS px) inside el's visible box where el (or a descendant) is the hit element:
  // the requested one (fx, fy) if it hits, else the first of a grid that hits with a pixel to
  // spare on every side (a tap is rounded, and an element overlapping el may start right
  // there), else the first of the grid that hits at all
  X.hits = (el, x, y) => {
    const h = document.elementFromPoint(x, y);
    return !!h && (h === el || el.contains(h));
  };
  X.hit = (el, fx, fy) => {
    if (!X.shown(el)) return null;
    const b = X.box(el);
    if (!b) return null;
    const at = ([u, v]) => [b[0] + (b[2] - b[0]) * u, b[1] + (b[3] - b[1]) * v];
    if (fx !== undefined) {
      const [x, y] = at([fx, fy]);
      if (X.hits(el, x, y)) return [x, y];
    }
    const pts = [[0.5, 0.5]];
    for (const u of [0.3, 0.7, 0.15, 0.85]) for (const v of [0.5, 0.3, 0.7, 0.15, 0.85]) pts.push([u, v]);
    for (const v of [0.3, 0.7]) pts.push([0.5, v]);
    const spare = ([x, y]) => [[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]]
      .every(([dx, dy]) => X.hits(el, x + dx, y + dy));
    const robust = pts.map(at).find(spare);
    return robust || pts.map(at).find(([x, y]) => X.hits(el, x, y)) || null;
  };
  X.scrollParent = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const cs = getComputedStyle(a);
      if (a.scrollHeight > a.clientHeight + 1 && /(auto|scroll)/.test(cs.overflowY)) return a;
    }
    return null;
  };
  // {x, y} normalised tap target, or {scroll: dir} to bring el into view, or {missing: why}
  X.target = (el, fx, fy) => {
    if (!el) return {missing: 'no such element'};
    if (!X.shown(el)) return {missing: 'element not displayed'};
    const p = X.hit(el, fx, fy);
    if (p) return {x: p[0] / W, y: p[1] / H};
    const sp = X.scrollParent(el);
    if (sp) {
      const r = el.getBoundingClientRect(), a = sp.getBoundingClientRect();
      const bottom = Math.min(a.bottom, H);
      if (r.top + r.height / 2 >= bottom - 1) return {scroll: 'up'};
      if (r.top + r.height / 2 <= a.top + 1) return {scroll: 'down'};
    }
    return {missing: 'element covered or off screen'};
  };
})();
"""

Expert = Callable[["Page"], Action]
EXPERTS: dict[str, Expert] = {}


def expert(*names: str) -> Callable[[Expert], Expert]:
    def add(fn: Expert) -> Expert:
        for name in names:
            EXPERTS[name] = fn
        return fn

    return add


def _r(v: float) -> float:
    return round(min(1.0, max(0.0, float(v))), 4)


class Page:
    """Privileged read access to the task page, for experts. Produces Actions only."""

    def __init__(self, env: WebEnv) -> None:
        self.env = env
        env.evaluate(HELPERS_JS)

    def js(self, body: str) -> Any:
        """Evaluate ``body`` (a JS expression) with ``X`` bound to the helper library."""
        return self.env.evaluate(f"((X) => ({body}))(window.__adx)")

    @property
    def utterance(self) -> str:
        return self.env.instruction

    def status(self) -> dict[str, Any]:
        return self.env.page_status()

    def act_on(self, el_js: str, fx: float | None = None, fy: float | None = None) -> Action:
        """Tap the element ``el_js`` evaluates to (at fractions ``fx, fy`` of its box when
        given), or swipe its scroll container to bring it into view."""
        args = f", {fx}, {fy}" if fx is not None else ""
        res = self.js(f"X.target({el_js}{args})")
        if "x" in res:
            return Action.tap(_r(res["x"]), _r(res["y"]))
        if "scroll" in res:
            return Action.swipe(res["scroll"])
        raise ExpertError(f"cannot reach {el_js}: {res.get('missing')}")

    def hover_on(self, el_js: str) -> Action:
        """Move the pointer over the element ``el_js`` (menus that open on mouse-over)."""
        action = self.act_on(el_js)
        if action.kind is ActionKind.TAP:
            assert action.x is not None and action.y is not None
            return Action.hover(action.x, action.y)
        return action

    def exists(self, el_js: str) -> bool:
        return bool(self.js(f"X.shown({el_js})"))

    def fill(self, el_js: str, value: str) -> Action | None:
        """Next action to make text field ``el_js`` hold ``value`` (None when it does).

        A wrong text is cleared as a person does, whatever its length: ``key(ctrl+a)`` selects
        it all, then ``type`` replaces the selection (or ``backspace`` deletes it). So is a
        right prefix with the caret not at its end (a tap puts the caret where it lands)."""
        st = self.js(
            f"(() => {{ const e = {el_js}; if (!e) return null;"
            " const n = e.value.length, s = e.selectionStart, t = e.selectionEnd;"
            " const all = s == null ? String(document.getSelection()) === e.value"
            " : s === 0 && t === n;"
            " return {v: e.value, f: document.activeElement === e, all: n > 0 && all,"
            " end: s == null || (s === n && t === n)}; })()"
        )
        if st is None:
            raise ExpertError(f"no field {el_js}")
        if st["v"] == value:
            return None
        if not st["f"]:
            return self.act_on(el_js)
        if st["all"]:
            return Action.type_text(value) if value else Action.press("backspace")
        if st["v"] and not (value.startswith(st["v"]) and st["end"]):
            return Action.press("ctrl+a")
        return Action.type_text(value[len(st["v"]) :])


def _quoted(text: str) -> list[str]:
    return re.findall(r'"([^"]*)"', text)


def _sel(css: str) -> str:
    return f"X.q({json.dumps(css)})"


def _toggle_then(
    p: Page, css: str, read_js: str, want: Callable[[Any], bool], submit_js: str
) -> Action:
    """Tap the first of the elements ``css`` whose on/off state is not ``want(label)``, else
    submit; ``read_js`` maps an element ``e`` to ``[label, on]``."""
    items = f"X.all({json.dumps(css)})"
    for i, (label, on) in enumerate(p.js(f"{items}.map(e => {read_js})")):
        if on != want(label):
            return p.act_on(f"{items}[{i}]")
    return p.act_on(submit_js)


def _fill_then(p: Page, fields: Iterable[tuple[str, str]], submit_js: str) -> Action:
    for el_js, value in fields:
        action = p.fill(el_js, value)
        if action is not None:
            return action
    return p.act_on(submit_js)
