// The apps' shared front end: layout, app switcher, hash routes, the JSON API client with its
// spinner, toasts, pagination, form controls and dialogs. Each app's script (/static/<app>.js)
// registers its sidebar and views on window.__app and calls start().
//
// Deterministic by design (the env observes the page after every action): nothing depends on
// the wall clock (dates come from the server), nothing polls, toasts stay until the next
// pointer or key input instead of timing out, and no CSS animation moves the layout.
(() => {
  const C = window.APP_CONFIG;
  const A = window.__app = {ready: false, name: C.app, title: C.title, routes: [], busy: 0,
                            inputs: 0, renders: 0, sidebarView: null};

  // -- DOM ----------------------------------------------------------------------------------
  const h = A.h = (tag, attrs, ...kids) => {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'text') el.textContent = v;
      else if (k === 'value') el.value = v;
      else el.setAttribute(k, v === true ? '' : v);
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false) continue;
      el.appendChild(typeof kid === 'string' || typeof kid === 'number'
        ? document.createTextNode(String(kid)) : kid);
    }
    return el;
  };
  A.esc = (s) => String(s);

  // -- layout -------------------------------------------------------------------------------
  const switcher = h('nav', {class: 'switcher'},
    C.apps.map((a) => h('a', {href: a.url, class: a.name === C.app ? 'app current' : 'app',
                              'aria-current': a.name === C.app ? 'page' : null}, a.title)));
  const sidebar = h('aside', {class: 'sidebar', id: 'sidebar'});
  const main = h('main', {id: 'main'});
  const spinner = h('div', {class: 'spinner', role: 'status', hidden: true}, 'Loading…');
  const toasts = h('div', {class: 'toasts', id: 'toasts'});
  document.body.append(
    h('header', {class: 'topbar'}, h('span', {class: 'brand'}, C.title), switcher),
    h('div', {class: 'page'}, sidebar, h('div', {class: 'content'}, spinner, main)),
    toasts);

  // -- the API client and its spinner -------------------------------------------------------
  A.api = async (method, path, body) => {
    A.busy++;
    spinner.hidden = false;
    try {
      const r = await fetch('/api/' + path, {
        method, headers: {'Content-Type': 'application/json'},
        body: body === undefined ? undefined : JSON.stringify(body)});
      const data = await r.json();
      if (!r.ok) throw new Error(data.error || ('HTTP ' + r.status));
      return data;
    } finally {
      if (--A.busy === 0) spinner.hidden = true;
    }
  };
  A.get = (path, query) => {
    const q = new URLSearchParams(Object.entries(query || {}).filter(([, v]) => v !== undefined && v !== ''));
    return A.api('GET', path + (q.toString() ? '?' + q : ''));
  };
  A.post = (path, body) => A.api('POST', path, body || {});
  // run a write; on success toast `ok` and go to `then` (a hash), on failure toast the error
  A.write = async (path, body, ok, then) => {
    try {
      const out = await A.post(path, body);
      if (ok) A.toast(ok);
      if (then !== undefined) await A.go(then);
      return out;
    } catch (e) {
      A.toast(e.message, 'error');
      return null;
    }
  };

  // -- toasts: shown until the next pointer or key input -----------------------------------
  A.toast = (text, kind) => {
    toasts.appendChild(h('div', {class: 'toast ' + (kind || 'info'), role: 'status',
                                 'data-born': A.inputs}, text));
  };
  const input = () => {
    A.inputs++;
    for (const t of Array.from(toasts.children)) if (+t.dataset.born < A.inputs) t.remove();
  };
  document.addEventListener('pointerdown', input, true);
  document.addEventListener('mousedown', input, true);
  document.addEventListener('keydown', input, true);

  // -- routes ---------------------------------------------------------------------------------
  // A.route('message/:id', async (params, query) => node): hashes look like #/message/12?x=1
  A.route = (pattern, view) => A.routes.push({parts: pattern.split('/'), view});
  A.home = '';
  A.parse = (hash) => {
    const [path, qs] = (hash || '').replace(/^#\/?/, '').split('?');
    return {parts: path ? path.split('/').map(decodeURIComponent) : [],
            query: Object.fromEntries(new URLSearchParams(qs || ''))};
  };
  A.hash = (path, query) => {
    const q = new URLSearchParams(Object.entries(query || {}).filter(([, v]) => v !== undefined && v !== '' && v !== null));
    return '#/' + path + (q.toString() ? '?' + q : '');
  };
  // Views change without a hashchange event: its task may run after the page looked idle, so
  // the new view's request would start late. Hash links are routed here too.
  A.go = (hash) => {
    if (location.hash !== hash) history.pushState(null, '', hash);
    return A.render();
  };
  document.addEventListener('click', (e) => {
    const a = e.target.closest && e.target.closest('a[href^="#"]');
    if (!a || e.button !== 0) return;
    e.preventDefault();
    A.go(a.getAttribute('href'));
  });
  A.render = async () => {
    const token = ++A.renders;
    const {parts, query} = A.parse(location.hash || A.home);
    let found = null, params = {};
    for (const r of A.routes) {
      if (r.parts.length !== parts.length) continue;
      params = {};
      if (r.parts.every((p, i) => p.startsWith(':') ? (params[p.slice(1)] = parts[i], true) : p === parts[i])) {
        found = r; break;
      }
    }
    let node, side = null;
    try {
      [node, side] = await Promise.all([
        found ? found.view(params, query) : h('p', {class: 'empty'}, 'Page not found.'),
        A.sidebarView ? A.sidebarView(parts, query) : null]);
    } catch (e) {
      node = h('div', {class: 'error'}, h('h2', {}, 'Something went wrong'), h('p', {}, e.message));
    }
    if (token !== A.renders) return;  // a newer render started meanwhile
    main.replaceChildren(node);
    if (side) sidebar.replaceChildren(side);
  };
  window.addEventListener('popstate', () => A.render());
  A.start = async (home) => {
    A.home = home;
    if (!location.hash) history.replaceState(null, '', home);
    await A.render();
    A.ready = true;
  };

  // -- building blocks ------------------------------------------------------------------------
  A.nav = (items, current) => h('nav', {class: 'side-nav'}, items.map((it) =>
    h('a', {href: it.href, class: it.href === current ? 'side-link current' : 'side-link',
            'aria-current': it.href === current ? 'page' : null},
      it.label, it.count ? h('span', {class: 'count'}, ` ${it.count}`) : null)));
  A.pager = (page, pages, hashFor) => h('nav', {class: 'pager'},
    h('button', {class: 'btn', disabled: page <= 1, onclick: () => A.go(hashFor(page - 1))}, '‹ Previous'),
    h('span', {class: 'page-no'}, `Page ${page} of ${pages}`),
    h('button', {class: 'btn', disabled: page >= pages, onclick: () => A.go(hashFor(page + 1))}, 'Next ›'));
  A.toolbar = (...kids) => h('div', {class: 'toolbar'}, ...kids);
  // a search field and its button (Enter in the field searches too)
  A.searchBox = (placeholder, value, search) => {
    const input = h('input', {name: 'q', placeholder, value: value || '',
      onkeydown: (e) => { if (e.key === 'Enter') search(input.value.trim()); }});
    return h('div', {class: 'toolbar'}, h('div', {class: 'field'}, input),
      A.button('Search', () => search(input.value.trim())));
  };
  A.button = (label, onclick, kind) => h('button', {class: 'btn ' + (kind || ''), onclick}, label);
  A.title = (text, ...extra) => h('div', {class: 'title-row'}, h('h1', {}, text), ...extra);
  // a labelled text field; `multiline` gives a textarea
  A.field = (label, name, opts) => {
    const o = opts || {};
    const ctl = o.multiline
      ? h('textarea', {name, placeholder: label, rows: o.rows || 5}, o.value || '')
      : h('input', {name, type: o.type || 'text', placeholder: label, value: o.value || '',
                    autocomplete: 'off'});
    return h('div', {class: 'field'}, h('span', {class: 'label'}, label), ctl);
  };
  // one choice among a few: a row of radio buttons
  A.choice = (label, name, options, value) => h('div', {class: 'field'},
    h('span', {class: 'label'}, label),
    h('div', {class: 'choices', role: 'radiogroup', 'data-name': name,
              'data-value': value || ''},
      options.map((opt) => h('button', {type: 'button', role: 'radio', class: 'chip',
        'aria-checked': String(opt === value), onclick: (e) => {
          const group = e.currentTarget.parentElement;
          group.dataset.value = opt;
          for (const b of group.children) b.setAttribute('aria-checked', String(b === e.currentTarget));
        }}, opt))));
  // an on/off switch
  A.switch = (label, name, on) => h('button', {type: 'button', role: 'switch', class: 'switch',
    'data-name': name, 'aria-checked': String(!!on), onclick: (e) => {
      const b = e.currentTarget;
      b.setAttribute('aria-checked', String(b.getAttribute('aria-checked') !== 'true'));
    }}, label);
  // one choice among many: a button that opens a menu
  A.dropdown = (label, name, options, value) => {
    const wrap = h('div', {class: 'field dropdown', 'data-name': name, 'data-value': value || ''});
    const button = h('button', {type: 'button', class: 'btn select', 'aria-haspopup': 'menu',
                                onclick: () => { menu.hidden = !menu.hidden; }},
      `${label}: ${value || 'None'}`);
    const menu = h('div', {class: 'menu', role: 'menu', hidden: true}, options.map((opt) =>
      h('button', {type: 'button', role: 'menuitem', onclick: () => {
        wrap.dataset.value = opt; button.textContent = `${label}: ${opt}`; menu.hidden = true;
      }}, opt)));
    wrap.append(h('span', {class: 'label'}, label), button, menu);
    return wrap;
  };
  // the values of a form's controls, by name
  A.values = (root) => {
    const out = {};
    for (const el of root.querySelectorAll('input[name], textarea[name]')) {
      out[el.name] = el.type === 'checkbox' ? el.checked : el.value;
    }
    for (const el of root.querySelectorAll('[data-name]')) {
      out[el.dataset.name] = el.getAttribute('role') === 'switch'
        ? el.getAttribute('aria-checked') === 'true' : el.dataset.value;
    }
    return out;
  };
  // a modal dialog; resolves with the label of the button pressed
  A.dialog = (title, text, buttons) => new Promise((resolve) => {
    const close = (label) => { veil.remove(); resolve(label); };
    const veil = h('div', {class: 'veil'}, h('div', {class: 'dialog', role: 'dialog',
                                                     'aria-label': title},
      h('h2', {}, title), h('p', {}, text),
      h('div', {class: 'dialog-buttons'}, buttons.map((b, i) =>
        h('button', {class: i === buttons.length - 1 ? 'btn primary' : 'btn',
                     onclick: () => close(b)}, b)))));
    document.body.appendChild(veil);
  });
  A.empty = (text) => h('p', {class: 'empty'}, text);
  A.fmtDate = (iso) => {
    const [y, m, d] = String(iso).slice(0, 10).split('-').map(Number);
    const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    return `${months[m - 1]} ${d}, ${y}`;
  };
  A.money = (cents) => '$' + (cents / 100).toFixed(2);
})();
