// Tracker: issues by status with search and pages, an issue page with its fields and
// comments, and new issues.
(() => {
  const A = window.__app, h = A.h;
  const STATUSES = ['Open', 'In progress', 'Done'];
  const PRIORITIES = ['Low', 'Medium', 'High', 'Urgent'];
  let counts = {};

  A.sidebarView = async () => h('div', {},
    h('button', {class: 'btn primary compose', onclick: () => A.go(A.hash('new'))}, 'New issue'),
    A.nav([{href: A.hash('issues'), label: 'All issues'},
           ...STATUSES.map((s) => ({href: A.hash('issues', {status: s}), label: s, count: counts[s]}))]));

  const searchBox = (query) => A.searchBox('Search issues', query.q,
    (q) => A.go(A.hash('issues', {status: query.status, q})));

  A.route('issues', async (_, query) => {
    const d = await A.get('issues', query);
    counts = d.counts;
    return h('div', {}, A.title(query.status ? `${query.status} issues` : 'All issues'), searchBox(query),
      d.items.length ? h('div', {class: 'list'}, d.items.map((i) =>
        h('a', {class: 'row', href: A.hash('issue/' + i.id)},
          h('span', {class: 'c1'}, i.key), h('span', {class: 'c2'}, i.title),
          h('span', {class: 'c1'}, `${i.status} · ${i.priority}`),
          h('span', {class: 'c3'}, i.assignee || 'Unassigned')))) : A.empty('No issues found.'),
      d.pages > 1 ? A.pager(d.page, d.pages, (n) => A.hash('issues', {...query, page: n})) : null);
  });

  A.route('issue/:id', async ({id}) => {
    const it = await A.get('issues/' + id);
    const fields = h('div', {class: 'form'},
      A.choice('Status', 'status', STATUSES, it.status),
      A.choice('Priority', 'priority', PRIORITIES, it.priority),
      A.dropdown('Assignee', 'assignee', ['Unassigned', ...it.members], it.assignee || 'Unassigned'));
    const save = () => {
      const v = A.values(fields);
      A.write(`issues/${id}/update`, {status: v.status, priority: v.priority,
        assignee: v.assignee === 'Unassigned' ? '' : v.assignee}, `${it.key} updated`, A.hash('issue/' + id));
    };
    const note = h('div', {class: 'form'}, A.field('Add a comment', 'body', {multiline: true, rows: 3}));
    const comment = () => A.write(`issues/${id}/comment`, {body: A.values(note).body}, 'Comment added',
                                  A.hash('issue/' + id));
    return h('div', {},
      h('a', {class: 'back-link', href: A.hash('issues')}, '‹ Back to issues'),
      A.title(`${it.key} · ${it.title}`),
      h('p', {class: 'meta-line'}, it.description),
      fields, A.toolbar(A.button('Save changes', save, 'primary')),
      h('h2', {}, `Comments (${it.comments.length})`),
      it.comments.map((c) => h('div', {class: 'card'}, h('p', {class: 'meta-line'}, `${c.author} · ${A.fmtDate(c.date)}`), h('p', {}, c.body))),
      note, A.toolbar(A.button('Comment', comment)));
  });

  A.route('new', async () => {
    const {members} = await A.get('members');
    const f = h('div', {class: 'form'},
      A.field('Title', 'title'), A.field('Description', 'description', {multiline: true, rows: 4}),
      A.choice('Priority', 'priority', PRIORITIES, ''),
      A.dropdown('Assignee', 'assignee', ['Unassigned', ...members], 'Unassigned'));
    const create = async () => {
      const v = A.values(f);
      const out = await A.write('issues', {title: v.title, description: v.description, priority: v.priority,
        assignee: v.assignee === 'Unassigned' ? '' : v.assignee}, 'Issue created');
      if (out) await A.go(A.hash('issue/' + out.id));
    };
    return h('div', {}, A.title('New issue'), f, A.toolbar(A.button('Create issue', create, 'primary')));
  });

  A.get('issues').then((d) => { counts = d.counts; A.start(A.hash('issues', {status: 'Open'})); });
})();
