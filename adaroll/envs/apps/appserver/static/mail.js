// Mail: folders, paginated lists, a message view with actions, search and compose.
(() => {
  const A = window.__app, h = A.h;
  const SYSTEM = ['Inbox', 'Starred', 'Sent', 'Archive', 'Trash'];

  A.sidebarView = async (parts) => {
    const data = await A.get('folders');
    const current = parts[0] === 'folder' ? A.hash('folder/' + parts[1]) : null;
    const link = (name, count) => ({href: A.hash('folder/' + name), label: name, count});
    const unread = Object.fromEntries(data.folders.map((f) => [f.name, f.unread]));
    return h('div', {},
      h('button', {class: 'btn primary compose', onclick: () => A.go(A.hash('compose'))}, 'Compose'),
      A.nav(SYSTEM.map((n) => link(n, n === 'Starred' ? 0 : unread[n])), current),
      h('div', {class: 'side-title'}, 'Folders'),
      A.nav(data.folders.filter((f) => f.custom).map((f) => link(f.name, f.unread)), current));
  };

  const searchBox = (q) => A.searchBox('Search mail', q, (q) => A.go(A.hash('search', {q})));

  const list = (data, hashFor, empty) => h('div', {},
    data.items.length ? h('div', {class: 'list'}, data.items.map((m) =>
      h('a', {class: m.read ? 'row' : 'row unread', href: A.hash('message/' + m.id)},
        h('span', {class: 'c1'}, m.folder === 'Sent' ? 'To: ' + m.recipient : m.sender),
        h('span', {class: 'c2'}, (m.starred ? '★ ' : '') + m.subject),
        h('span', {class: 'c3'}, A.fmtDate(m.date))))) : A.empty(empty),
    data.pages > 1 ? A.pager(data.page, data.pages, hashFor) : null);

  A.route('folder/:name', async ({name}, query) => {
    const data = await A.get('messages', {folder: name, page: query.page});
    return h('div', {}, A.title(name), searchBox(''),
      list(data, (p) => A.hash('folder/' + name, {page: p}), `No messages in ${name}.`));
  });

  A.route('search', async (_, query) => {
    const data = await A.get('search', {q: query.q, page: query.page});
    return h('div', {}, A.title(`Search: ${query.q || ''}`), searchBox(query.q),
      list(data, (p) => A.hash('search', {q: query.q, page: p}), 'No messages match.'));
  });

  A.route('message/:id', async ({id}) => {
    const m = await A.get('messages/' + id);
    const back = A.hash('folder/' + m.folder);
    const move = (folder, note) => A.write(`messages/${id}/update`, {folder}, note, back);
    const menu = h('div', {class: 'menu', role: 'menu', hidden: true},
      m.folders.filter((f) => !['Sent', 'Trash', m.folder].includes(f)).map((f) =>
        h('button', {role: 'menuitem', onclick: () => move(f, `Moved to ${f}`)}, f)));
    return h('div', {},
      h('a', {class: 'back-link', href: back}, `‹ Back to ${m.folder}`),
      A.title(m.subject),
      A.toolbar(
        A.button('Reply', () => A.go(A.hash('compose', {reply: id}))),
        A.button('Forward', () => A.go(A.hash('compose', {forward: id}))),
        A.button(m.starred ? 'Unstar' : 'Star', () =>
          A.write(`messages/${id}/update`, {starred: !m.starred}, m.starred ? 'Star removed' : 'Starred', A.hash('message/' + id))),
        m.folder !== 'Archive' ? A.button('Archive', () => move('Archive', 'Conversation archived')) : null,
        m.folder !== 'Trash' ? A.button('Delete', () => move('Trash', 'Moved to Trash'), 'danger') : null,
        h('div', {class: 'field'}, A.button('Move to ▾', () => { menu.hidden = !menu.hidden; }), menu)),
      h('div', {class: 'card'},
        h('p', {class: 'meta-line'}, `From: ${m.sender} <${m.sender_email}>`),
        h('p', {class: 'meta-line'}, `To: ${m.recipient}`),
        h('p', {class: 'meta-line'}, `Date: ${A.fmtDate(m.date)}`),
        h('div', {class: 'body-text'}, m.body)));
  });

  A.route('compose', async (_, query) => {
    let to = '', subject = '', body = '', replyTo = null;
    const ref = query.reply || query.forward;
    if (ref) {
      const m = await A.get('messages/' + ref);
      if (query.reply) { to = m.sender_email; subject = 'Re: ' + m.subject; replyTo = m.id; }
      else { subject = 'Fwd: ' + m.subject; body = `\n\n---------- Forwarded message ----------\nFrom: ${m.sender}\n${m.body}`; }
    }
    const form = h('div', {class: 'form'},
      A.field('To', 'to', {value: to}), A.field('Subject', 'subject', {value: subject}),
      A.field('Message', 'body', {value: body, multiline: true, rows: 8}));
    const send = () => {
      const v = A.values(form);
      A.write('send', {to: v.to, subject: v.subject, body: v.body, reply_to: replyTo},
              'Message sent', A.hash('folder/Inbox'));
    };
    return h('div', {}, A.title(query.reply ? 'Reply' : query.forward ? 'Forward' : 'New message'),
      form, A.toolbar(A.button('Send', send, 'primary'), A.button('Discard', () => A.go(A.hash('folder/Inbox')))));
  });

  A.start(A.hash('folder/Inbox'));
})();
