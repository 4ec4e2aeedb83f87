// Calendar: a week view with navigation, event pages, and a form with a month picker.
(() => {
  const A = window.__app, h = A.h;
  const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
  const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August',
                  'September', 'October', 'November', 'December'];
  const HOURS = ['08', '09', '10', '11', '12', '13', '14', '15', '16', '17', '18'].map((x) => x + ':00');
  const DURATIONS = {'30 min': 30, '1 hour': 60, '2 hours': 120};
  // dates as ISO text, computed in UTC (the page's clock is never consulted)
  const parse = (iso) => { const [y, m, d] = iso.split('-').map(Number); return new Date(Date.UTC(y, m - 1, d)); };
  const fmt = (date) => date.toISOString().slice(0, 10);
  const addDays = (iso, n) => { const d = parse(iso); d.setUTCDate(d.getUTCDate() + n); return fmt(d); };
  const monday = (iso) => addDays(iso, -((parse(iso).getUTCDay() + 6) % 7));
  const long = (iso) => { const d = parse(iso); return `${['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'][d.getUTCDay()]}, ${A.fmtDate(iso)}`; };
  let today = null;

  A.sidebarView = async () => h('div', {},
    h('button', {class: 'btn primary compose', onclick: () => A.go(A.hash('new'))}, 'New event'),
    A.nav([{href: A.hash('week/' + monday(today)), label: 'This week'}]),
    h('div', {class: 'side-title'}, 'Calendars'),
    h('p', {class: 'meta-line'}, 'Work'), h('p', {class: 'meta-line'}, 'Personal'));

  A.route('week/:monday', async ({monday: mon}) => {
    const d = await A.get('week', {of: mon});
    const cols = DAYS.map((name, i) => {
      const day = addDays(d.monday, i);
      return h('div', {class: 'day' + (day === d.today ? ' today' : '')},
        h('div', {class: 'day-head'}, `${name} ${parse(day).getUTCDate()}`),
        d.events.filter((e) => e.date === day).map((e) =>
          h('a', {class: 'event ' + e.calendar.toLowerCase(), href: A.hash('event/' + e.id)}, `${e.start} ${e.title}`)));
    });
    return h('div', {}, A.title(`Week of ${A.fmtDate(d.monday)}`),
      A.toolbar(A.button('‹ Previous week', () => A.go(A.hash('week/' + addDays(d.monday, -7)))),
        A.button('This week', () => A.go(A.hash('week/' + monday(d.today)))),
        A.button('Next week ›', () => A.go(A.hash('week/' + addDays(d.monday, 7))))),
      h('div', {class: 'week'}, cols));
  });

  A.route('event/:id', async ({id}) => {
    const e = await A.get('events/' + id);
    const back = A.hash('week/' + monday(e.date));
    const del = async () => {
      if (await A.dialog('Delete event?', `"${e.title}" will be removed from your calendar.`, ['Cancel', 'Delete']) === 'Delete') {
        await A.write(`events/${id}/delete`, {}, 'Event deleted', back);
      }
    };
    return h('div', {},
      h('a', {class: 'back-link', href: back}, '‹ Back to the week'),
      A.title(e.title),
      h('div', {class: 'card'},
        h('p', {class: 'meta-line'}, long(e.date)),
        h('p', {class: 'meta-line'}, `${e.start} – ${e.end}`),
        e.location ? h('p', {class: 'meta-line'}, `Location: ${e.location}`) : null,
        h('p', {class: 'meta-line'}, `Calendar: ${e.calendar}`)),
      A.toolbar(A.button('Edit', () => A.go(A.hash('edit/' + id))), A.button('Delete', del, 'danger')));
  });

  // a month grid; the chosen day is the picker's data-value
  const picker = (value, shown) => {
    const wrap = h('div', {class: 'field picker', 'data-name': 'date', 'data-value': value || ''});
    const draw = (month) => {
      const first = parse(month + '-01');
      const y = first.getUTCFullYear(), m = first.getUTCMonth();
      const days = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
      const lead = (first.getUTCDay() + 6) % 7;
      const step = (n) => fmt(new Date(Date.UTC(y, m + n, 1))).slice(0, 7);
      const cells = [];
      for (let i = 0; i < lead; i++) cells.push(h('span', {class: 'blank'}));
      for (let d = 1; d <= days; d++) {
        const iso = `${month}-${String(d).padStart(2, '0')}`;
        cells.push(h('button', {type: 'button', class: 'dayc', 'aria-pressed': String(iso === wrap.dataset.value),
          onclick: () => { wrap.dataset.value = iso; draw(month); }}, String(d)));
      }
      wrap.replaceChildren(h('span', {class: 'label'}, 'Date'),
        h('div', {class: 'month'},
          h('div', {class: 'month-head'}, A.button('Previous month', () => draw(step(-1))),
            h('span', {class: 'month-name'}, `${MONTHS[m]} ${y}`), A.button('Next month', () => draw(step(1)))),
          h('div', {class: 'month-grid'}, DAYS.map((n) => h('span', {class: 'dow'}, n)), cells)));
    };
    draw((value || shown).slice(0, 7));
    return wrap;
  };

  const form = async (e) => {
    let duration = '';
    if (e) {
      const [sh, sm] = e.start.split(':').map(Number), [eh, em] = e.end.split(':').map(Number);
      const mins = eh * 60 + em - sh * 60 - sm;
      duration = Object.keys(DURATIONS).find((k) => DURATIONS[k] === mins) || '';
    }
    const f = h('div', {class: 'form'},
      A.field('Title', 'title', {value: e ? e.title : ''}),
      picker(e ? e.date : '', e ? e.date : today),
      A.choice('Start', 'start', HOURS, e ? e.start : ''),
      A.choice('Duration', 'duration', Object.keys(DURATIONS), duration),
      A.field('Location', 'location', {value: e ? e.location : ''}),
      A.choice('Calendar', 'calendar', ['Work', 'Personal'], e ? e.calendar : 'Work'));
    const save = () => {
      const v = A.values(f);
      let end = '';
      if (v.start && DURATIONS[v.duration]) {
        const mins = Number(v.start.slice(0, 2)) * 60 + Number(v.start.slice(3)) + DURATIONS[v.duration];
        end = `${String(Math.floor(mins / 60)).padStart(2, '0')}:${String(mins % 60).padStart(2, '0')}`;
      }
      const body = {title: v.title, date: v.date, start: v.start, end, location: v.location, calendar: v.calendar};
      A.write(e ? `events/${e.id}/update` : 'events', body, e ? 'Event updated' : 'Event created',
              A.hash('week/' + monday(v.date || today)));
    };
    return h('div', {}, A.title(e ? 'Edit event' : 'New event'), f,
      A.toolbar(A.button('Save', save, 'primary'),
        A.button('Cancel', () => A.go(A.hash('week/' + monday(e ? e.date : today))))));
  };
  A.route('new', async () => form(null));
  A.route('edit/:id', async ({id}) => form(await A.get('events/' + id)));

  A.get('week').then((d) => { today = d.today; A.start(A.hash('week/' + d.monday)); });
})();
