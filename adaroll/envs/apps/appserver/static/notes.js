// Notes: folders, note lists (pinned first), an editor with pinning, moving and deleting.
(() => {
  const A = window.__app, h = A.h;

  A.sidebarView = async () => {
    const d = await A.get('folders');
    return h('div', {},
      h('button', {class: 'btn primary compose', onclick: () => A.go(A.hash('new'))}, 'New note'),
      A.nav(d.folders.map((f) => ({href: A.hash('folder/' + f.name), label: f.name, count: f.n}))));
  };

  const searchBox = (q) => A.searchBox('Search notes', q, (q) => A.go(A.hash('search', {q})));
  const list = (d, hashFor) => h('div', {},
    d.items.length ? h('div', {class: 'list'}, d.items.map((n) =>
      h('a', {class: 'row', href: A.hash('note/' + n.id)},
        h('span', {class: 'c2'}, (n.pinned ? 'Pinned · ' : '') + n.title),
        h('span', {class: 'c1'}, n.folder), h('span', {class: 'c3'}, A.fmtDate(n.updated))))) : A.empty('No notes.'),
    d.pages > 1 ? A.pager(d.page, d.pages, hashFor) : null);

  A.route('folder/:name', async ({name}, query) => {
    const d = await A.get('notes', {folder: name, page: query.page});
    return h('div', {}, A.title(name), searchBox(''), list(d, (n) => A.hash('folder/' + name, {page: n})));
  });
  A.route('search', async (_, query) => {
    const d = await A.get('notes', {q: query.q, page: query.page});
    return h('div', {}, A.title(`Search: ${query.q || ''}`), searchBox(query.q),
      list(d, (n) => A.hash('search', {q: query.q, page: n})));
  });

  A.route('note/:id', async ({id}) => {
    const n = await A.get('notes/' + id);
    const back = A.hash('folder/' + n.folder);
    const f = h('div', {class: 'form'},
      A.field('Title', 'title', {value: n.title}),
      A.field('Body', 'body', {value: n.body, multiline: true, rows: 10}),
      A.dropdown('Folder', 'folder', n.folders, n.folder));
    const save = () => {
      const v = A.values(f);
      A.write(`notes/${id}/update`, {title: v.title, body: v.body, folder: v.folder}, 'Note saved', A.hash('note/' + id));
    };
    const del = async () => {
      if (await A.dialog('Delete note?', `"${n.title}" will be deleted for good.`, ['Cancel', 'Delete']) === 'Delete') {
        await A.write(`notes/${id}/delete`, {}, 'Note deleted', back);
      }
    };
    return h('div', {},
      h('a', {class: 'back-link', href: back}, `‹ Back to ${n.folder}`),
      A.title(n.pinned ? 'Note (pinned)' : 'Note'), f,
      A.toolbar(A.button('Save', save, 'primary'),
        A.button(n.pinned ? 'Unpin' : 'Pin', () => A.write(`notes/${id}/update`, {pinned: !n.pinned},
          n.pinned ? 'Note unpinned' : 'Note pinned', A.hash('note/' + id))),
        A.button('Delete', del, 'danger')));
  });

  A.route('new', async (_, query) => {
    const {folders} = await A.get('folders');
    const names = folders.map((x) => x.name);
    const f = h('div', {class: 'form'},
      A.field('Title', 'title'), A.field('Body', 'body', {multiline: true, rows: 10}),
      A.dropdown('Folder', 'folder', names, query.folder || names[0]));
    const create = () => {
      const v = A.values(f);
      A.write('notes', {title: v.title, body: v.body, folder: v.folder}, 'Note created', A.hash('folder/' + v.folder));
    };
    return h('div', {}, A.title('New note'), f, A.toolbar(A.button('Create note', create, 'primary')));
  });

  A.start(A.hash('folder/Personal'));
})();
