"""The JavaScript the web env installs in every task page, before the page's own scripts.

One job: ``window.__adaroll`` - the page-side half of :class:`~adaroll.envs.web.env.WebEnv`.
It holds the virtual clock, the short-timer and animation-frame tracking behind the settle
policy and its event-driven settle loop, the CSS ``:hover`` stripping and image preload done at
load, the end-of-episode cleanup and the page *shell* that decide whether a reset may reuse the
page, the ``<select>``/text-focus checks the actions use, and (from :mod:`~adaroll.envs.web.dom`)
the element list. The policies they implement are described in the module docstring of
:mod:`adaroll.envs.web.env` ("Settle policy", "Determinism", "Resets that reuse the page").
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from adaroll.envs.web import dom


class PreludeSettings(Protocol):
    """The web env's settings the prelude is built from
    (:class:`~adaroll.envs.web.env.WebEnvConfig`)."""

    @property
    def virtual_date(self) -> str | None: ...
    @property
    def settle_timer_ms(self) -> int: ...


PRELUDE_TEMPLATE = r"""
(() => {
  if (window.__adaroll) return;
  const A = window.__adaroll = {pending: new Set()};
  const realSetTimeout = window.setTimeout.bind(window);
  const realClearTimeout = window.clearTimeout.bind(window);
  // Virtual wall clock: starts at a fixed instant, advances with performance.now().
  // The clock restarts at T0 with every episode (A.restartClock), so an episode sees the same
  // dates whether its page was just loaded or ran earlier episodes.
  const T0 = __T0__;
  A.restartClock = () => {};
  if (T0 !== null) {
    const RealDate = Date;
    let p0 = performance.now();
    A.restartClock = () => { p0 = performance.now(); };
    const now = () => T0 + Math.floor(performance.now() - p0);
    const VDate = function (...args) {
      if (!new.target) return new RealDate(now()).toString();
      return args.length ? new RealDate(...args) : new RealDate(now());
    };
    VDate.prototype = RealDate.prototype;
    VDate.now = now; VDate.UTC = RealDate.UTC; VDate.parse = RealDate.parse;
    window.Date = VDate;
  }
  // Track short timers for the settle policy.
  const SHORT = __SHORT__;
  window.setTimeout = function (fn, delay, ...rest) {
    const d = Number(delay) || 0;
    if (typeof fn !== 'function' || d > SHORT) return realSetTimeout(fn, delay, ...rest);
    let id;
    id = realSetTimeout(function () {
      A.pending.delete(id);
      try { return fn.apply(this, arguments); } finally { A.notify(); }
    }, delay, ...rest);
    A.pending.add(id);
    return id;
  };
  window.clearTimeout = function (id) {
    A.pending.delete(id);
    realClearTimeout(id);
    A.notify();
  };
  const realRaf = window.requestAnimationFrame.bind(window);
  const realCaf = window.cancelAnimationFrame.bind(window);
  A.rafs = new Set();
  window.requestAnimationFrame = function (cb) {
    let id;
    id = realRaf(function (ts) {
      A.rafs.delete(id);
      try { return cb(ts); } finally { A.notify(); }
    });
    A.rafs.add(id);
    return id;
  };
  window.cancelAnimationFrame = function (id) { A.rafs.delete(id); realCaf(id); A.notify(); };
  // Wake the settle loop when the last short timer or frame callback has run (event-driven:
  // a page waiting on a 300 ms timer costs one wake-up, not one every few milliseconds).
  A.wakers = [];
  A.notify = () => {
    if (A.pending.size || A.rafs.size || !A.wakers.length) return;
    const wakers = A.wakers;
    A.wakers = [];
    for (const wake of wakers) wake();
  };
  A.quiet = (ms) => new Promise((r) => {
    const t = realSetTimeout(r, ms);
    A.wakers.push(() => { realClearTimeout(t); r(); });
  });
  A.frame = () => new Promise((r) => realRaf(() => r()));
  A.tick = (ms) => new Promise((r) => realSetTimeout(r, ms));
  // Settle: let queued tasks run, then wait while short timers or animation-frame callbacks
  // are pending (at most maxMs): until they have all run (A.notify), then let queued tasks run
  // and look again; images still loading are looked at every 10 ms. Returns how many were
  // still pending.
  A.settle = async (maxMs, frames) => {
    const t0 = performance.now();
    for (let i = 0; i < frames; i++) await A.frame();
    await A.tick(0);
    while ((A.pending.size || A.rafs.size || A.imagesPending()) && performance.now() - t0 < maxMs) {
      const left = maxMs - (performance.now() - t0);
      await A.quiet(A.pending.size || A.rafs.size ? left : Math.min(10, left));
      await A.tick(0);
    }
    return A.pending.size + A.rafs.size;
  };
  // Links to "#" would navigate to PAGE#, which enters the browser history and turns every
  // "#" link :visited in later episodes; the navigation only scrolls to the top, so skip it.
  document.addEventListener('click', (e) => {
    const a = e.target && e.target.closest && e.target.closest('a[href="#"]');
    if (a) e.preventDefault();
  }, true);
  // Load every image the page's stylesheets refer to (icons drawn with CSS `content` or
  // backgrounds) before the episode starts: otherwise they arrive after the first
  // observation on a cold cache and move the layout - a cold and a warm browser would differ.
  A.preloaded = [];
  A.preloadImages = async () => {
    const urls = new Set(), re = /url\(["']?([^"')]+)["']?\)/g;
    const walk = (rules, base) => {
      for (const r of rules) {
        if (r.cssRules) walk(r.cssRules, base);
        if (!r.style) continue;
        const text = r.style.cssText;
        let m;
        while ((m = re.exec(text))) if (!m[1].startsWith('data:')) urls.add(new URL(m[1], base).href);
      }
    };
    for (const sheet of document.styleSheets) {
      let rules = null;
      try { rules = sheet.cssRules; } catch (e) { continue; }
      walk(rules, sheet.href || document.baseURI);
    }
    await Promise.all([...urls].map((u) => new Promise((res) => {
      const img = new Image(); A.preloaded.push(img);
      img.onload = img.onerror = () => res(); img.src = u;
    })));
    return urls.size;
  };
  // Pointer actions are touch-like (the pointer is parked after each): drop CSS :hover rules,
  // whose effects (e.g. swapped icons that load asynchronously) would otherwise move the
  // layout under the pointer between press and release, at times the env does not control.
  A.stripHover = () => {
    let n = 0;
    const strip = (owner) => {
      const rules = owner.cssRules;
      for (let i = rules.length - 1; i >= 0; i--) {
        const r = rules[i];
        if (r.selectorText && r.selectorText.includes(':hover')) {
          const keep = r.selectorText.split(',').filter((s) => !s.includes(':hover'));
          if (keep.length) r.selectorText = keep.join(',');
          else owner.deleteRule(i);
          n++;
        } else if (r.cssRules) strip(r);
      }
    };
    for (const sheet of document.styleSheets) { try { strip(sheet); } catch (e) {} }
    return n;
  };
  A.imagesPending = () => Array.from(document.images).some((i) => !i.complete);
  // Before a new episode in an already loaded page: drop what the last episode left that a
  // freshly loaded page would not have - pending short timers and animation-frame callbacks,
  // focus, a text selection, click marks, scroll offsets (of the window and of containers such
  // as #area that the task keeps while rebuilding their content).
  A.endEpisode = () => {
    for (const id of A.pending) realClearTimeout(id);
    for (const id of A.rafs) realCaf(id);
    A.pending.clear(); A.rafs.clear();
    if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
    window.getSelection().removeAllRanges();
    window.scrollTo(0, 0);
    // MiniWoB marks clicked elements with the episode's id (read only within that episode)
    for (const el of document.querySelectorAll('[data-tampered]')) el.removeAttribute('data-tampered');
    for (const el of document.querySelectorAll('*')) {
      if (el.scrollTop) el.scrollTop = 0;
      if (el.scrollLeft) el.scrollLeft = 0;
    }
    return true;
  };
  // The page without what an episode start rebuilds (the task area's content, the instruction,
  // the reward display): equal after an episode start in a reused page and after one in a
  // freshly loaded page unless the last episode left something there (an open date picker,
  // a menu appended to the body, classes or scrolling on the task area itself).
  // Also the event handlers on window, document, <html> and <body> (e.g. a dropdown left open
  // keeps a "close on outside click" handler on the document), counted natively and, where the
  // page uses jQuery, per event type.
  A.shell = () => {
    const b = document.body.cloneNode(true);
    for (const sel of ['#area', '#query', '#reward-display']) {
      const e = b.querySelector(sel);
      if (e) e.replaceChildren();
    }
    const area = document.getElementById('area');
    const jq = window.jQuery && window.jQuery._data;
    const handlers = [window, document, document.body].map((t) => {
      const events = (jq && window.jQuery._data(t, 'events')) || {};
      return Object.keys(events).sort().map((k) => `${k}:${events[k].length}`).join(',');
    });
    return b.outerHTML + (area ? `|${area.scrollTop},${area.scrollLeft}` : '') +
           `|${A.lastingListeners}|${handlers.join(';')}`;
  };
  A.lastingListeners = 0;
  const lasting = (t) => t === window || t === document || t === document.documentElement ||
                         t === document.body;
  const realAdd = EventTarget.prototype.addEventListener;
  const realRemove = EventTarget.prototype.removeEventListener;
  EventTarget.prototype.addEventListener = function (...args) {
    if (lasting(this)) A.lastingListeners++;
    return realAdd.apply(this, args);
  };
  EventTarget.prototype.removeEventListener = function (...args) {
    if (lasting(this)) A.lastingListeners--;
    return realRemove.apply(this, args);
  };
  window.alert = function () {};
  window.confirm = function () { return true; };
  window.prompt = function () { return null; };
  document.addEventListener('DOMContentLoaded', () => {
    if (window.jQuery) jQuery.fx.off = true;
    // no blinking text caret: screenshots must not depend on when they are taken
    const style = document.createElement('style');
    style.textContent = '* { caret-color: transparent !important; }';
    document.head.appendChild(style);
  });
  window.addEventListener('load', () => { if (window.jQuery) jQuery.fx.off = true; });
  // true when the element under (x, y) is inside the focused <select> (its native popup,
  // which headless Chromium neither draws nor lets the page see, may be open)
  A.selectAt = (x, y) => {
    const el = document.elementFromPoint(x, y), f = document.activeElement;
    return !!(el && f && f.tagName === 'SELECT' && (el === f || f.contains(el)));
  };
  A.focusIsText = () => {
    const el = document.activeElement;
    if (!el) return false;
    if (el.isContentEditable || el.tagName === 'TEXTAREA') return true;
    if (el.tagName !== 'INPUT') return false;
    const t = (el.getAttribute('type') || 'text').toLowerCase();
    return ['text', 'password', 'email', 'number', 'search', 'tel', 'url', ''].includes(t);
  };
  __ELEMENTS__
})();
"""


def prelude_js(config: PreludeSettings) -> str:
    t0 = "null"
    if config.virtual_date is not None:
        t0 = str(int(datetime.fromisoformat(config.virtual_date).timestamp() * 1000))
    return (
        PRELUDE_TEMPLATE.replace("__T0__", t0)
        .replace("__SHORT__", str(int(config.settle_timer_ms)))
        .replace("__ELEMENTS__", dom.ELEMENTS_JS)
    )
