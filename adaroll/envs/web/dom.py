"""The policy's view of a web page: a short list of visible UI elements read from the DOM.

The extraction runs inside the page (``ELEMENTS_JS`` defines ``__adaroll.elements``) and
returns only what a person could see on the task area (the ``screen``: the top-left
``160 x 210`` CSS pixels MiniWoB++ draws its task in):

* elements of ``document.body`` whose visible box - clipped by every scrolling/overflow-hidden
  ancestor and by the screen - is non-empty, skipping MiniWoB's own chrome (``#query`` - the
  instruction is given separately -, the reward display, the sync cover, the click canvas);
* an element is listed when it is *interactive* (links, buttons, form controls and elements
  with an ARIA widget role - everything inside them folds into them -; elements with a
  tabindex or with a pointer cursor that their parent does not have - containers such as menus,
  whose inner targets stay separate -, and inside such containers pointer elements with their
  own text or icon), when it has text of its own, shows an icon or scrolls (role ``scrollarea``); plain
  text inside an interactive element is folded into that element; a ``<label>`` wrapping a
  control gives the control its text instead of being listed;
* icons (``<img>``, CSS ``content: url(...)``, a text-less background image) are named by
  their ``alt`` text or image file name (``icon`` role when nothing else applies) - what a
  person sees as the picture; ``aria-label``/``title`` name elements without text;
* a text-less leaf box (no child elements, not a control or picture) whose background stands
  out from what is behind it, or that a border outlines, is named by its colour (role ``box``):
  the CSS colour name when the computed colour is exactly one (click-color's "lime", "grey"),
  else the hue family of its HSL colour (red, orange, yellow, green, cyan, blue, purple,
  magenta; black/white/grey by lightness and saturation) - what a person would call the shades
  of click-shades. This is what those tasks' judges read (``data-color``), seen as a person
  sees it;
* ``role`` comes from the tag/type/ARIA role; ``text`` is the visible text (a text field's
  value, or its placeholder when empty), whitespace-collapsed, at most ``MAX_TEXT`` characters;
* ``bounds`` are normalised to the screen and rounded to 4 decimals; ``flags`` from
  :data:`adaroll.envs.base.ELEMENT_FLAGS` (``enabled``, ``clickable``, ``checked``,
  ``selected``, ``focused``, ``editable``, ``scrollable``);
* at most ``max_elements`` (default 60): when over budget interactive elements are kept first,
  then text, always reported in document order.

Nothing here reads event listeners, task variables or hidden attributes: the list carries no
privileged information (experts read the page through :meth:`WebEnv.evaluate` instead).
"""

from __future__ import annotations

from typing import Any

from adaroll.envs.base import ELEMENT_FLAGS, UIElement

SCREEN_WIDTH = 160
SCREEN_HEIGHT = 210
SCREEN = (SCREEN_WIDTH, SCREEN_HEIGHT)
"""The task area (the screen): width and height in CSS pixels."""
MAX_ELEMENTS = 60
MAX_TEXT = 80

# Installed into the page by the prelude (see env.PRELUDE_JS); defines __adaroll.elements.
ELEMENTS_JS = r"""
A.elements = function (maxN, W, H, maxText) {
  const SKIP = new Set(['reward-display', 'sync-task-cover', 'click-canvas', 'query',
                        'attention-canvas']);
  const WIDGET_ROLES = new Set(['button', 'link', 'checkbox', 'radio', 'tab', 'menuitem',
    'option', 'treeitem', 'slider', 'spinbutton', 'textbox', 'combobox', 'listbox', 'switch',
    'searchbox', 'menuitemcheckbox', 'menuitemradio']);
  const CONTROLS = new Set(['a', 'button', 'select', 'textarea', 'input', 'option', 'summary']);
  const TEXT_INPUTS = new Set(['text', 'password', 'email', 'number', 'search', 'tel', 'url',
    'date', 'time', 'datetime-local', 'month', 'week', '']);
  const collapse = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const cut = (s) => collapse(s).slice(0, maxText);
  const r4 = (v) => Math.round(v * 10000) / 10000;
  const info = new Map();  // element -> {cs, interactive, control}

  function ownText(el) {
    let t = '';
    for (const c of el.childNodes) if (c.nodeType === 3) t += ' ' + c.data;
    return collapse(t);
  }
  function iconName(el, cs, tag) {
    let url = '';
    if (tag === 'img') {
      if (el.getAttribute('alt')) return collapse(el.getAttribute('alt'));
      url = el.getAttribute('src') || '';
    } else {
      const m = /url\(["']?([^"')]+)["']?\)/.exec(cs.content !== 'normal' && cs.content !== 'none'
        ? cs.content : (el.childElementCount === 0 && !el.textContent.trim() ? cs.backgroundImage : ''));
      if (m) url = m[1];
    }
    if (!url) return '';
    const base = url.split('/').pop().split('?')[0].replace(/\.[a-z0-9]+$/i, '');
    return base.replace(/-hover$/, '') || 'icon';
  }
  // The colour a person would name for a text-less box (click-color's "lime" box, the
  // shades of click-shades): a CSS colour name when the computed colour is exactly one, else
  // the hue family of the HSL colour (greys by saturation and lightness).
  const NAMED = {'255,0,0': 'red', '0,128,0': 'green', '0,0,255': 'blue', '0,255,0': 'lime',
    '128,128,0': 'olive', '0,0,0': 'black', '255,255,255': 'white', '128,128,128': 'grey',
    '128,0,128': 'purple', '255,165,0': 'orange', '255,255,0': 'yellow', '0,255,255': 'cyan',
    '255,192,203': 'pink', '255,0,255': 'magenta', '165,42,42': 'brown', '0,0,128': 'navy',
    '0,128,128': 'teal', '128,0,0': 'maroon', '192,192,192': 'silver'};
  const FAMILIES = [[15, 'red'], [45, 'orange'], [70, 'yellow'], [165, 'green'], [195, 'cyan'],
                    [255, 'blue'], [290, 'purple'], [335, 'magenta'], [360, 'red']];
  const rgba = (c) => {
    const m = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)/.exec(c || '');
    return m ? [+m[1], +m[2], +m[3], m[4] === undefined ? 1 : +m[4]] : null;
  };
  function colourName(c) {
    const key = c.slice(0, 3).map(Math.round).join(',');
    if (NAMED[key]) return NAMED[key];
    const [r, g, b] = c.slice(0, 3).map((v) => v / 255);
    const max = Math.max(r, g, b), min = Math.min(r, g, b), l = (max + min) / 2, d = max - min;
    const s = d === 0 ? 0 : d / (1 - Math.abs(2 * l - 1));
    if (l < 0.12) return 'black';
    if (l > 0.94) return 'white';
    if (s < 0.12) return 'grey';
    let h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
    h = (h * 60 + 360) % 360;
    for (const [upTo, name] of FAMILIES) if (h < upTo) return name;
    return 'red';
  }
  function backdrop(el) {  // the opaque background colour behind el (white by default)
    for (let p = el.parentElement; p; p = p.parentElement) {
      const c = rgba((info.has(p) ? info.get(p).cs : getComputedStyle(p)).backgroundColor);
      if (c && c[3] > 0.5) return c;
    }
    return [255, 255, 255, 1];
  }
  // a leaf box (no controls, no children) whose own background stands out from what is behind
  // it, or that a border outlines (a white box on white)
  function boxColour(el, cs, tag) {
    if (el.childElementCount || CONTROLS.has(tag) || tag === 'img' || tag === 'canvas' ||
        el instanceof SVGElement) return '';
    const c = rgba(cs.backgroundColor);
    if (!c || c[3] <= 0.5) return '';
    const back = backdrop(el);
    const bordered = ['Top', 'Right', 'Bottom', 'Left'].some((side) =>
      parseFloat(cs['border' + side + 'Width']) > 0 && cs['border' + side + 'Style'] !== 'none');
    if (!bordered && c.slice(0, 3).every((v, i) => Math.round(v) === Math.round(back[i]))) return '';
    return colourName(c);
  }
  function roleOf(el, tag) {
    const aria = el.getAttribute('role');
    if (aria) return aria;
    if (el instanceof SVGElement) return tag === 'text' ? 'text' : 'graphic';
    switch (tag) {
      case 'a': return 'link';
      case 'button': return 'button';
      case 'select': return 'combobox';
      case 'option': return 'option';
      case 'textarea': return 'textbox';
      case 'canvas': return 'canvas';
      case 'li': return 'listitem';
      case 'td': case 'th': return 'cell';
      case 'label': return 'label';
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
      case 'input': {
        const t = (el.getAttribute('type') || 'text').toLowerCase();
        if (t === 'checkbox' || t === 'radio') return t;
        if (t === 'button' || t === 'submit' || t === 'reset' || t === 'image') return 'button';
        if (t === 'range') return 'slider';
        return 'textbox';
      }
    }
    return '';
  }
  function isEditable(el, tag) {
    if (el.isContentEditable) return true;
    if (tag === 'textarea') return !el.readOnly && !el.disabled;
    if (tag === 'input') {
      const t = (el.getAttribute('type') || 'text').toLowerCase();
      return TEXT_INPUTS.has(t) && !el.readOnly && !el.disabled;
    }
    return false;
  }
  function clip(el, rect) {
    let l = Math.max(rect.left, 0), t = Math.max(rect.top, 0);
    let r = Math.min(rect.right, W), b = Math.min(rect.bottom, H);
    for (let p = el.parentElement; p && p !== document.body && p !== document.documentElement;
         p = p.parentElement) {
      const cs = info.has(p) ? info.get(p).cs : getComputedStyle(p);
      if (cs.overflowX !== 'visible' || cs.overflowY !== 'visible') {
        const pr = p.getBoundingClientRect();
        l = Math.max(l, pr.left); t = Math.max(t, pr.top);
        r = Math.min(r, pr.right); b = Math.min(b, pr.bottom);
      }
      if (cs.position === 'fixed') break;
    }
    return (r - l >= 1 && b - t >= 1) ? [l, t, r, b] : null;
  }
  // Pass 1: which elements are interactive. `ctx` = nearest interactive ancestor's kind:
  // null, 'control' (link/button/...: everything inside folds into it) or 'pointer' (a
  // clickable container: inner elements with their own text or icon are targets of their own).
  function mark(el, parentCursor, ctx) {
    if (el.id && SKIP.has(el.id)) return;
    const cs = getComputedStyle(el);
    if (cs.display === 'none') return;
    const tag = el.tagName.toLowerCase();
    if (tag === 'script' || tag === 'style' || tag === 'noscript') return;
    const aria = el.getAttribute('role');
    const control = CONTROLS.has(tag) || (aria && WIDGET_ROLES.has(aria)) ||
                    (tag === 'label' && !!el.htmlFor);
    const wrapsControl = tag === 'label' && !!el.querySelector('input,select,textarea');
    const pointer = cs.cursor === 'pointer';
    let interactive = false, kind = ctx;
    if (!wrapsControl && ctx !== 'control') {
      if (control) { interactive = true; kind = 'control'; }
      else if (el.hasAttribute('tabindex') || (pointer && (parentCursor !== 'pointer' ||
               (ctx === 'pointer' && (ownText(el) || iconName(el, cs, tag)))))) {
        // focusable or clickable containers (menus, lists): inner targets stay separate
        interactive = true; kind = 'pointer';
      }
    }
    info.set(el, {cs: cs, tag: tag, interactive: interactive, wrapsControl: wrapsControl,
                  control: interactive && kind === 'control'});
    if (tag === 'select') return;  // options of a closed select are not on screen
    for (const child of el.children) mark(child, cs.cursor, kind);
  }
  // text of `el` without the subtrees of interactive descendants
  function textOutside(el) {
    let t = '';
    for (const c of el.childNodes) {
      if (c.nodeType === 3) t += ' ' + c.data;
      else if (c.nodeType === 1) {
        const i = info.get(c);
        if (!i || i.interactive) continue;
        const sub = textOutside(c);
        if (sub) t += ' ' + sub;
      }
    }
    return collapse(t);
  }
  function hasInteractiveDescendant(el) {
    for (const c of el.children) {
      const i = info.get(c);
      if (i && (i.interactive || hasInteractiveDescendant(c))) return true;
    }
    return false;
  }
  const out = [];
  // Pass 2: list elements in document order.
  function emit(el, inInteractive) {
    const i = info.get(el);
    if (!i) return;
    const {cs, tag, interactive} = i;
    const hidden = cs.visibility === 'hidden' || cs.visibility === 'collapse' ||
                   parseFloat(cs.opacity) === 0;
    let role = roleOf(el, tag);
    let text = '';
    const icon = iconName(el, cs, tag);
    if (tag === 'input' || tag === 'textarea') {
      const t = (el.getAttribute('type') || '').toLowerCase();
      if (t === 'checkbox' || t === 'radio') {
        text = el.labels && el.labels.length ? el.labels[0].innerText : '';
      } else if (t === 'button' || t === 'submit' || t === 'reset') {
        text = el.value;
      } else {
        text = el.value || el.getAttribute('placeholder') || '';
      }
    } else if (tag === 'select') {
      const o = el.options[el.selectedIndex];
      text = o ? o.text : '';
    } else if (interactive) {
      text = textOutside(el);
    } else if (el instanceof SVGElement && tag === 'text') {
      text = el.textContent;
    } else if (!i.wrapsControl) {
      text = ownText(el);
    }
    text = cut(text) || cut(el.getAttribute('aria-label') || el.getAttribute('title') || '');
    if (!text && icon) { text = icon; if (!role) role = 'icon'; }
    if (!text && !icon) {
      const colour = boxColour(el, cs, tag);
      if (colour) { text = colour; if (!role) role = 'box'; }
    }
    const svgShape = el instanceof SVGElement && tag !== 'svg' && tag !== 'g' && tag !== 'text';
    const scrollable = el !== document.body &&
      ((el.scrollHeight > el.clientHeight + 1 && /(auto|scroll)/.test(cs.overflowY)) ||
       (el.scrollWidth > el.clientWidth + 1 && /(auto|scroll)/.test(cs.overflowX)));
    // a clickable/focusable container whose targets are all listed separately
    const wrapper = interactive && !i.control && !text && hasInteractiveDescendant(el);
    const listed = !hidden && ((interactive && !wrapper) || scrollable ||
                   (!inInteractive && (text || svgShape || tag === 'canvas')));
    if (listed) {
      const box = clip(el, el.getBoundingClientRect());
      if (box) {
        const flags = [];
        if (interactive) {
          if (!el.disabled && el.getAttribute('aria-disabled') !== 'true') flags.push('enabled');
          flags.push('clickable');
        }
        if (el.checked === true || el.getAttribute('aria-checked') === 'true') flags.push('checked');
        if ((tag === 'option' && el.selected) || el.getAttribute('aria-selected') === 'true')
          flags.push('selected');
        if (document.activeElement === el && el !== document.body) flags.push('focused');
        if (isEditable(el, tag)) flags.push('editable');
        if (scrollable) flags.push('scrollable');
        if (!role) role = interactive && !wrapper ? 'generic' : (text ? 'text' : 'scrollarea');
        out.push({role: role, text: text, interactive: interactive, flags: flags,
                  bounds: [r4(box[0] / W), r4(box[1] / H), r4(box[2] / W), r4(box[3] / H)]});
      }
    }
    if (tag === 'select') return;
    for (const child of el.children) emit(child, inInteractive || interactive);
  }
  mark(document.body, 'auto', null);
  emit(document.body, false);
  if (out.length <= maxN) return out;
  const keep = new Set();
  for (const e of out) if (e.interactive && keep.size < maxN) keep.add(e);
  for (const e of out) if (!e.interactive && keep.size < maxN) keep.add(e);
  return out.filter((e) => keep.has(e));
};
"""


def parse_elements(raw: list[dict[str, Any]]) -> tuple[UIElement, ...]:
    """UIElements (ids = list positions) from the page's ``__adaroll.elements`` result."""
    elements = []
    for i, item in enumerate(raw):
        bounds = tuple(min(1.0, max(0.0, float(v))) for v in item["bounds"])
        flags = frozenset(f for f in item.get("flags", ()) if f in ELEMENT_FLAGS)
        elements.append(UIElement(i, str(item["role"]), str(item.get("text", "")), bounds, flags))  # type: ignore[arg-type]
    return tuple(elements)
