"""What the apps env adds to the web env's page prelude (:mod:`adaroll.envs.web.page_prelude`).

* **Requests count as pending work.** ``fetch`` and reading a response's body (``json``,
  ``text``) are tracked like short timers, so the settle policy waits for a server's answer -
  the simulated latency included - and for the rendering that follows it: an observation shows
  the page with its data, never a spinner left over from the last action.
* **Leaving the page is the env's job.** A click on a link to another page (the app switcher)
  does not navigate by itself; the page records the address (``__adaroll.navigation``) and the
  env loads it after the step, waiting for the new page to be ready. A navigation started by
  the page would race with the env's own DevTools calls on the old document. Links within an
  app change only the URL's hash and stay in the page.
"""

from __future__ import annotations

APPS_PRELUDE_JS = r"""
(() => {
  const A = window.__adaroll;
  if (!A || A.appsPrelude) return;
  A.appsPrelude = true;
  let next = -1;
  const track = (p) => {
    const id = next--;
    A.pending.add(id);
    const settled = () => { A.pending.delete(id); A.notify(); };
    p.then(settled, settled);
    return p;
  };
  const realFetch = window.fetch.bind(window);
  window.fetch = (...args) => track(realFetch(...args));
  for (const name of ['json', 'text']) {
    const real = Response.prototype[name];
    Response.prototype[name] = function () { return track(real.call(this)); };
  }
  A.navigation = null;
  document.addEventListener('click', (e) => {
    const a = e.target && e.target.closest && e.target.closest('a[href]');
    if (!a || e.defaultPrevented) return;
    const url = new URL(a.href, location.href);
    const here = location.origin + location.pathname + location.search;
    if (url.origin + url.pathname + url.search === here) return;  // a hash link: this page
    e.preventDefault();
    A.navigation = url.href;
  });
  A.takeNavigation = () => { const u = A.navigation; A.navigation = null; return u; };
})();
"""

APP_READY_JS = "!!(window.__app && window.__app.ready)"
"""True once the app's first view has rendered (``common.js`` sets it)."""
