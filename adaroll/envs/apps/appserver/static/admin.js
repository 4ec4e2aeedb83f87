// Admin: user accounts (paginated, searchable), a user page, invitations and settings.
(() => {
  const A = window.__app, h = A.h;
  const ROLES = ['Viewer', 'Editor', 'Admin'];

  A.sidebarView = async () => h('div', {}, A.nav([
    {href: A.hash('users'), label: 'Users'}, {href: A.hash('invites'), label: 'Invitations'},
    {href: A.hash('settings'), label: 'Settings'}]));

  const searchBox = (q) => A.searchBox('Search users', q, (q) => A.go(A.hash('users', {q})));

  A.route('users', async (_, query) => {
    const d = await A.get('users', query);
    return h('div', {}, A.title('Users'), searchBox(query.q),
      d.items.length ? h('div', {class: 'list'}, d.items.map((u) =>
        h('a', {class: 'row', href: A.hash('user/' + u.id)},
          h('span', {class: 'c1'}, u.name), h('span', {class: 'c2'}, u.email),
          h('span', {class: 'c1'}, `${u.role} · ${u.team}`),
          h('span', {class: 'c3'}, u.active ? 'Active' : 'Deactivated')))) : A.empty('No users found.'),
      d.pages > 1 ? A.pager(d.page, d.pages, (n) => A.hash('users', {q: query.q, page: n})) : null);
  });

  A.route('user/:id', async ({id}) => {
    const u = await A.get('users/' + id);
    const f = h('div', {class: 'form'},
      A.choice('Role', 'role', ROLES, u.role),
      A.dropdown('Team', 'team', u.teams, u.team),
      h('div', {class: 'field'}, h('span', {class: 'label'}, 'Account'), A.switch('Account active', 'active', u.active)));
    const save = () => A.write(`users/${id}/update`, A.values(f), `${u.name} updated`, A.hash('user/' + id));
    return h('div', {},
      h('a', {class: 'back-link', href: A.hash('users')}, '‹ Back to users'),
      A.title(u.name), h('p', {class: 'meta-line'}, u.email), f,
      A.toolbar(A.button('Save changes', save, 'primary')));
  });

  A.route('invites', async () => {
    const d = await A.get('invites');
    return h('div', {}, A.title('Invitations', A.button('Invite someone', () => A.go(A.hash('invite')), 'primary')),
      d.items.length ? h('div', {class: 'list'}, d.items.map((i) => h('div', {class: 'row'},
        h('span', {class: 'c2'}, i.email), h('span', {class: 'c1'}, `${i.role} · ${i.team}`),
        A.button('Revoke', () => A.write(`invites/${i.id}/revoke`, {}, `Invitation for ${i.email} revoked`, A.hash('invites'))))))
        : A.empty('No pending invitations.'));
  });

  A.route('invite', async () => {
    const d = await A.get('invites');
    const f = h('div', {class: 'form'}, A.field('Email', 'email'),
      A.choice('Role', 'role', ROLES, ''), A.dropdown('Team', 'team', d.teams, ''));
    const send = () => A.write('invites', A.values(f), 'Invitation sent', A.hash('invites'));
    return h('div', {}, A.title('Invite someone'), f, A.toolbar(A.button('Send invitation', send, 'primary')));
  });

  A.route('settings', async () => {
    const s = (await A.get('settings')).settings;
    const f = h('div', {class: 'form'},
      A.field('Organisation name', 'org_name', {value: s.org_name}),
      A.field('Session timeout (minutes)', 'session_timeout', {value: s.session_timeout}),
      h('div', {class: 'field'}, h('span', {class: 'label'}, 'Security'),
        A.switch('Require two-factor sign-in', 'require_2fa', s.require_2fa === '1')),
      h('div', {class: 'field'}, h('span', {class: 'label'}, 'Sign-up'),
        A.switch('Allow self sign-up', 'allow_signups', s.allow_signups === '1')),
      A.choice('Default role', 'default_role', ROLES, s.default_role));
    const save = () => A.write('settings', A.values(f), 'Settings saved', A.hash('settings'));
    return h('div', {}, A.title('Settings'), f, A.toolbar(A.button('Save settings', save, 'primary')));
  });

  A.start(A.hash('users'));
})();
