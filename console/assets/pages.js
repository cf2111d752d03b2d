// The console's pages (docs/console.md): overview, deliveries, one delivery, users,
// forwarding, follow-ups. Each renders into `root` from the read API (api()) and, for an
// admin session, offers its actions (act()).
import { act, api, every, go, h, isAdmin } from '/console/assets/session.js';
import { barChart, formatTime, formatValue, lineChart } from '/console/assets/charts.js';

const HOUR = 3600000, DAY = 86400000;
const RANGES = { '1h': HOUR, '24h': DAY, '7d': 7 * DAY, '30d': 30 * DAY, '90d': 90 * DAY };
// A summaries chart reads one page of this many: one bounded request however long the range.
const SUMMARIES_PER_CHART = 1000;

// A destination's state: one whose [[forward]] block was removed from the configuration
// keeps its entries, but nothing sends them and no action can reach it.
function destinationState(d) {
  return d.configured === false ? 'not configured' : d.paused ? 'paused' : 'sending';
}
// One destination's entries (GET /v1/forwarding/{destination}/entries), or, when they fail
// to load, none and {error}: one destination never blanks the others.
async function entriesOf(destination, params) {
  try {
    return await api(`/v1/forwarding/${encodeURIComponent(destination)}/entries`, params);
  } catch (e) {
    if (e.message === 'signed out') throw e;
    return { items: [], error: e.message };
  }
}
function iso(ms) { return ms === null || ms === undefined ? '–' : new Date(ms).toISOString().replace('.000Z', 'Z'); }
function ago(ms) {
  if (ms === null || ms === undefined) return '–';
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  return s < 120 ? `${s} s ago` : s < 7200 ? `${Math.round(s / 60)} min ago` : `${Math.round(s / 3600)} h ago`;
}
function seconds(s) {
  if (s === null || s === undefined) return '–';
  return s < 120 ? `${Math.round(s)} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`;
}
function bytes(n) {
  if (n === null || n === undefined) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + ' ' + units[i];
}

// A figure the server could not read (the database did not answer when the figures were
// taken: PostgreSQL unreachable) comes as null: shown as unknown, never as 0.
const UNKNOWN_TITLE = 'Unknown: the database did not answer when these figures were read';
function figure(value, format = String, unit = '') {
  return value === null || value === undefined
    ? h('span', { class: 'unknown', title: UNKNOWN_TITLE }, '–' + unit) : format(value);
}
// A last error as stored, without an empty tail ("HTTP 500: " when the answer had no body).
function errorText(text) { return (text || '').replace(/[:\s]+$/, ''); }
// When the next attempt is due: none for an entry or job that is dead (nothing retries it).
function nextAttempt(state, ms) { return state === 'dead' ? '–' : iso(ms); }

function table(id, headings, rows, attrs = {}) {
  return h('table', { id, ...attrs },
    h('thead', {}, h('tr', {}, headings.map((t) => h('th', {}, t)))),
    h('tbody', {}, rows));
}

// A two-column table of (label, value) rows, without a heading row.
function pairs(id, rows) {
  return h('table', { id, class: 'pairs' }, h('tbody', {}, rows.map(([k, v]) =>
    h('tr', {}, h('th', {}, k), h('td', { class: k === 'Error' ? 'error-text' : '' }, v ?? '–')))));
}

// An action's answer in words: "requeued 150", "jobs 3 (2 queued, 1 already_queued)",
// warnings by their text; the raw JSON stays in the audit log.
function outcomeText(outcome) {
  const parts = [];
  for (const [key, value] of Object.entries(outcome || {})) {
    const name = key.replaceAll('_', ' ');
    if (Array.isArray(value)) {
      if (!value.length) continue;
      if (value.every((v) => typeof v === 'string')) { parts.push(`${name}: ${value.join('; ')}`); continue; }
      const counts = {};
      for (const v of value) if (v && typeof v.outcome === 'string') counts[v.outcome] = (counts[v.outcome] || 0) + 1;
      const detail = Object.entries(counts).map(([o, n]) => `${n} ${o.replaceAll('_', ' ')}`).join(', ');
      parts.push(`${name} ${value.length}${detail ? ` (${detail})` : ''}`);
    } else if (value !== null && typeof value === 'object') {
      parts.push(`${name}: ${outcomeText(value)}`);
    } else {
      parts.push(`${name} ${value}`);
    }
  }
  return parts.join(', ') || 'done';
}

function button(label, action, fields, onDone, extra = {}) {
  return h('button', {
    type: 'button', 'data-action': action, ...extra,
    onclick: async (e) => {
      e.target.disabled = true;
      try {
        const outcome = await act(action, fields);
        flash(`${label}: ${outcomeText(outcome)}`);
        if (onDone) await onDone(outcome);
      } catch (err) {
        flash(`${label} failed: ${err.message}`, true);
      } finally {
        e.target.disabled = false;
      }
    },
  }, label);
}

function flash(message, error = false) {
  const box = document.getElementById('flash') || document.body.appendChild(h('div', { id: 'flash' }));
  box.className = error ? 'error' : 'ok';
  box.textContent = message;
}

// ---- Overview: the last hour from memory (GET /console/api/overview).

function parseSeries(name) {
  const brace = name.indexOf('{');
  const labels = {};
  if (brace >= 0) {
    // Values as the exposition escapes them (\\, \", \n): shown unescaped.
    for (const m of name.slice(brace + 1, -1).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[m[1]] = m[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    }
  }
  return { metric: brace >= 0 ? name.slice(0, brace) : name, labels };
}

function overviewModel(data) {
  const series = data.series.map(parseSeries);
  const find = (metric, pred = () => true) => series
    .map((s, i) => ({ ...s, i })).filter((s) => s.metric === metric && pred(s.labels));
  const latest = (s) => data.latest.v[s.i];
  return { series, find, latest, points: data.points, interval: data.interval_s };
}

// GET /readyz (no session needed; same origin): {ready, reason}.
async function readyz() {
  const response = await fetch('/readyz', { credentials: 'same-origin' });
  let answer = {};
  try { answer = await response.json(); } catch (_) { /* not JSON: the status says it */ }
  return { ready: response.ok, reason: answer.reason || `HTTP ${response.status}` };
}

export async function overview(root) {
  const cards = h('section', { class: 'cards' });
  const charts = h('section', { class: 'charts' });
  const inbox = h('section', {});
  const forwarding = h('section', {});
  const teams = h('section', {});
  // Shown while a refresh fails (the server stopped, the network went): the figures below
  // are then the last ones read, not today's.
  const stale = h('p', { id: 'overview-stale', class: 'error', hidden: true });
  // While serve applies the inbox again after a rebuild that did not finish: the other
  // pages answer 503 meanwhile, and the outcomes below are those of before the rebuild.
  const rebuilding = h('p', { id: 'overview-rebuild', class: 'error', hidden: true },
    'Rebuild unfinished: the derived tables are incomplete until serve has applied the inbox again ' +
    '(the pages that read them answer 503 meanwhile).');
  const notReady = h('p', { id: 'overview-not-ready', class: 'error', hidden: true });
  root.append(h('h1', {}, 'Overview'), stale, rebuilding, notReady, cards, charts, inbox, forwarding, teams);
  let lastRead = Date.now();
  const draw = async () => {
    const data = await api('/api/overview');
    lastRead = Date.now();
    stale.hidden = true;
    const m = overviewModel(data);
    // The sum of a family's latest values; null (unknown) when any of them is.
    const total = (found) => found.reduce((sum, s) => (sum === null || m.latest(s) == null ? null : sum + m.latest(s)), 0);
    const value = (metric, pred) => total(m.find(metric, pred));
    rebuilding.hidden = !value('healthhook_rebuild_unfinished');
    const outcomes = m.find('healthhook_deliveries_total');
    // The last minute's rate once the history covers a minute; before that (just after a
    // start) the count over what it covers: 3 in 10 s is not "18 / min".
    const lately = (s) => {
      const p = m.points;
      if (p.length < 2) return null;
      const a = p[Math.max(0, p.length - 7)], b = p[p.length - 1];
      if (a.v[s.i] == null || b.v[s.i] == null || b.t === a.t) return null;
      const delta = b.v[s.i] - a.v[s.i];
      if (b.t - a.t < 55000) return `${formatValue(delta)} in the last ${Math.round((b.t - a.t) / 1000)} s`;
      return `${formatValue(delta / ((b.t - a.t) / 60000))} / min lately`;
    };
    const card = (label, text, id, note) => h('div', { class: 'card' }, h('div', { class: 'label' }, label),
      h('div', { class: 'value', id }, text), note ? h('div', { class: 'note' }, note) : null);
    // Why deliveries are refused now (/readyz's reason: max_database_mib reached, the queue
    // above its high-water mark, the disk nearly full…): the cards count the 503s, this says why.
    const readiness = await readyz();
    notReady.hidden = readiness.ready;
    notReady.textContent = readiness.ready ? '' : `Not ready (/readyz answers 503): ${readiness.reason}`;
    const stored = outcomes.find((s) => s.labels.outcome === 'stored');
    const jobs = m.find('healthhook_jobs');
    cards.replaceChildren(
      // The process's counters: since this start (the inbox holds more; the families below count it).
      card('Deliveries stored since start', stored ? String(m.latest(stored) ?? 0) : '0', 'overview-stored',
           (stored && lately(stored)) || 'since start'),
      ...outcomes.filter((s) => s.labels.outcome !== 'stored').map((s) =>
        card('Answered ' + s.labels.outcome.replaceAll('_', ' '), String(m.latest(s) ?? 0), 'overview-' + s.labels.outcome)),
      card('Processor lag', figure(value('healthhook_processor_lag_deliveries'), (n) => `${n} deliveries`), 'overview-lag',
           figure(value('healthhook_processor_lag_seconds'), (s) => seconds(s) + ' behind', ' behind')),
      card('Follow-up jobs due', figure(total(jobs.filter((s) => s.labels.state === 'queued'))), 'overview-jobs-due',
           figure(total(jobs.filter((s) => s.labels.state === 'dead')), (n) => `${n} dead`, ' dead')),
      card('Database', figure(value('healthhook_database_bytes'), bytes), 'overview-database'),
    );

    const start = m.points.length ? m.points[0].t : Date.now() - HOUR;
    const range = { start: Math.min(start, Date.now() - HOUR), end: Date.now() };
    const rateSeries = outcomes.map((s) => ({
      name: s.labels.outcome,
      points: m.points.slice(1).map((p, k) => {
        const prev = m.points[k];
        const d = p.v[s.i] != null && prev.v[s.i] != null ? (p.v[s.i] - prev.v[s.i]) / ((p.t - prev.t) / 60000) : null;
        return { t: p.t, value: d };
      }).filter((p) => p.value !== null),
    })).filter((s) => s.points.some((p) => p.value > 0) || s.name === 'stored');
    const gauge = (metric, label) => m.find(metric).map((s) => ({
      name: label(s.labels),
      points: m.points.filter((p) => p.v[s.i] != null).map((p) => ({ t: p.t, value: p.v[s.i] })),
    }));
    charts.replaceChildren(
      lineChart(rateSeries, range, { title: 'Deliveries answered per minute', data: { chart: 'ingest' } }),
      lineChart(gauge('healthhook_processor_lag_seconds', () => 'lag (s)'), range,
                { title: 'Processor lag, seconds', data: { chart: 'lag' } }),
      lineChart(gauge('healthhook_forward_outbox_pending', (l) => l.destination), range,
                { title: 'Forwards pending, per destination', data: { chart: 'forwarding' } }),
    );

    // What the inbox holds in all (the cards above count since this start), per family and
    // outcome: healthhook_inbox_deliveries{family,status}.
    const held = m.find('healthhook_inbox_deliveries');
    const families = [...new Set(held.map((s) => s.labels.family))].sort();
    const statuses = [...new Set(held.map((s) => s.labels.status))].sort();
    const count = (family, status) => total(held.filter((s) => s.labels.family === family &&
                                                         (!status || s.labels.status === status)));
    inbox.replaceChildren(h('h2', {}, 'In the inbox, by family'), families.length
      ? table('overview-inbox', ['Family', ...statuses, 'In all'], families.map((f) => h('tr', { 'data-family': f },
        h('td', {}, f), ...statuses.map((st) => h('td', { 'data-status': st }, figure(count(f, st)))),
        h('td', { 'data-status': 'all' }, figure(count(f))))))
      : h('p', { class: 'muted' }, 'The inbox holds no processed delivery yet.'));

    const destinations = await api('/v1/forwarding');
    const rows = [];
    for (const d of destinations.destinations) {
      const waiting = await entriesOf(d.destination, { state: 'pending', limit: 1 });
      const dead = await entriesOf(d.destination, { state: 'dead', limit: 1 });
      const unread = waiting.error || dead.error;
      const lastError = unread ? `Could not load its entries: ${unread}`
        : errorText((waiting.items[0] && waiting.items[0].last_error) || (dead.items[0] && dead.items[0].last_error));
      rows.push(h('tr', { 'data-destination': d.destination }, h('td', {}, d.destination), h('td', {}, destinationState(d)),
        h('td', {}, d.pending), h('td', {}, d.dead), h('td', {}, d.dropped), h('td', {}, ago(d.oldest_pending_created_at_ms)),
        h('td', { class: 'error-text' }, lastError)));
    }
    forwarding.replaceChildren(h('h2', {}, 'Forwarding'), rows.length
      ? table('overview-forwarding', ['Destination', 'State', 'Pending', 'Dead', 'Dropped', 'Oldest pending', 'Last error'], rows)
      : h('p', { class: 'muted' }, 'No [[forward]] destination is configured.'));
    const silence = m.find('healthhook_seconds_since_last_verified_delivery');
    teams.replaceChildren(h('h2', {}, 'Since the last verified delivery'), table('overview-teams', ['Team', 'Seconds'],
      silence.map((s) => h('tr', {}, h('td', {}, s.labels.team || 'all teams'), h('td', {}, seconds(m.latest(s)))))));
  };
  await draw();
  every(10, () => draw().catch((e) => {
    stale.textContent = `Not updating: the last refresh failed (${e.message}). ` +
      `These figures are from ${new Date(lastRead).toISOString().slice(11, 19)} UTC.`;
    stale.hidden = false;
  }));
}

// ---- Deliveries: search (GET /v1/deliveries) and one delivery.


function toInputTime(text) { return text ? text.replace(/Z$/, '').slice(0, 16) : ''; }
function fromInputTime(text) { return text ? new Date(text + 'Z').toISOString() : ''; }

export async function deliveries(root, _arg, query) {
  const q = Object.fromEntries(query);
  const field = (id, label, attrs) => h('label', {}, label, h('input', { id, name: id, ...attrs }));
  const status = h('select', { id: 'search-status' }, ['', 'pending', 'processed', 'invalid', 'ignored', 'unknown']
    .map((s) => h('option', { value: s, selected: (q.status || '') === s }, s || 'any outcome')));
  // The read API lists webhooks unless asked for every origin (fetched pages: backfills,
  // workout streams, parsing jobs' answers).
  const origin = h('select', { id: 'search-origin' }, [['', 'webhooks'], ['any', 'webhooks and fetched pages']]
    .map(([v, text]) => h('option', { value: v, selected: (q.origin || '') === v }, text)));
  const form = h('form', { id: 'search-form', class: 'search' },
    field('search-user', 'User id or client user id', { value: q.user || '' }),
    field('search-event-type', 'Event type (glob)', { value: q.event_type || '', placeholder: 'daily.data.*' }),
    h('label', {}, 'Outcome', status),
    h('label', {}, 'Origin', origin),
    field('search-start', 'From (UTC)', { type: 'datetime-local', value: toInputTime(q.start) }),
    field('search-end', 'Until (UTC)', { type: 'datetime-local', value: toInputTime(q.end) }),
    field('search-message-id', 'Message id', { value: '' }),
    h('button', { id: 'search-button', type: 'submit' }, 'Search'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const id = document.getElementById('search-message-id').value.trim();
    if (id) { go('delivery', id); return; }
    go('deliveries', '', {
      user: document.getElementById('search-user').value.trim(),
      event_type: document.getElementById('search-event-type').value.trim(),
      status: status.value,
      origin: origin.value,
      start: fromInputTime(document.getElementById('search-start').value),
      end: fromInputTime(document.getElementById('search-end').value),
    });
  });
  const body = h('tbody', {});
  const results = h('table', { id: 'deliveries-table' }, h('thead', {}, h('tr', {},
    ['Seq', 'Message id', 'Received', 'Event type', 'Outcome', 'Error'].map((t) => h('th', {}, t)))), body);
  const more = h('button', { id: 'deliveries-more', type: 'button', hidden: true }, 'More');
  const note = h('p', { class: 'muted' });
  root.append(h('h1', {}, 'Deliveries'), form, results, more, note);

  const params = { event_type: q.event_type, status: q.status, origin: q.origin, start: q.start, end: q.end, limit: 50 };
  if (q.user) {
    // A user id when a user of that id is known (the service's are UUIDs, a replayed or
    // hand-written capture's may be anything). Else a backend's client user id, or the id
    // of a user whose deliveries all failed (invalid, unknown, ignored: no users row):
    // both, the server lists the deliveries that name either.
    params.client_user_id = q.user;
    params.user_id = q.user;
    try {
      await api('/v1/users/' + encodeURIComponent(q.user));
      delete params.client_user_id;
    } catch (e) {
      if (e.message === 'signed out') throw e;
    }
  }
  let scanned = 0;
  const load = async (cursor) => {
    more.hidden = true;  // one page at a time: a second click would ask for the same page again
    const page = await api('/v1/deliveries', { ...params, cursor });
    scanned += page.scanned;
    for (const d of page.items) {
      body.appendChild(h('tr', { class: 'delivery', 'data-seq': d.seq },
        h('td', {}, d.seq),
        h('td', {}, h('a', { class: 'delivery-link', href: '#/delivery/' + encodeURIComponent(d.message_id) }, d.message_id)),
        h('td', {}, iso(d.received_at_ms)), h('td', {}, d.event_type || '–'),
        h('td', { class: 'status status-' + d.status }, d.status), h('td', { class: 'error-text' }, d.error || '')));
    }
    more.hidden = !page.next_cursor;
    more.onclick = () => load(page.next_cursor);
    note.textContent = `${body.children.length} shown, ${scanned} inbox rows read` +
      (params.user_id || params.client_user_id ? ' (a search by user reads the rows of the window, newest first)' : '');
  };
  await load();
}

// The body view is bounded (docs/console.md, "One delivery"): indented only when nested at
// most PRETTY_MAX_DEPTH levels deep (its indentation costs depth² otherwise: 6,000 levels
// made 72 MB of spaces and froze the tab) and when the indented text fits in
// BODY_SHOWN_CHARS; else shown as received, cut at BODY_SHOWN_CHARS.
const PRETTY_MAX_DEPTH = 100;
const BODY_SHOWN_CHARS = 4 * 1024 * 1024;

// The body as received, indented: its own tokens are kept (JSON.parse would round integers
// above 2^53, print 72.0 as 72, keep one of two equal keys and move numeric keys first).
// {indented} or, when it cannot be, {reason}: not JSON, nested too deep, too long once
// indented. One pass, each step bounded: the work is linear in the text.
function pretty(text) {
  const tooDeep = { reason: `nested more than ${PRETTY_MAX_DEPTH} levels deep` };
  const tooLong = { reason: `longer than ${BODY_SHOWN_CHARS / 1048576} MiB once indented` };
  try {
    JSON.parse(text);
  } catch (e) {
    return e instanceof SyntaxError ? { reason: 'not JSON' } : tooDeep;  // a RangeError: the parser's stack
  }
  const parts = [];
  let length = 0, depth = 0;
  const add = (piece) => { parts.push(piece); length += piece.length; };
  const newline = () => '\n' + '  '.repeat(depth);
  for (let i = 0; i < text.length; i++) {
    if (length > BODY_SHOWN_CHARS) return tooLong;
    const c = text[i];
    if (c === ' ' || c === '\n' || c === '\r' || c === '\t') continue;
    if (c === '"') {
      // The whole string at once, up to its closing quote (an escaped one skipped).
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      add(text.slice(i, end + 1));
      i = end;
    } else if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      let next = i + 1;
      while (' \n\r\t'.includes(text[next])) next++;
      if (text[next] === close) { add(c + close); i = next; continue; }
      if (++depth > PRETTY_MAX_DEPTH) return tooDeep;
      add(c + newline());
    } else if (c === '}' || c === ']') {
      depth--;
      add(newline() + c);
    } else if (c === ',') {
      add(',' + newline());
    } else if (c === ':') {
      add(': ');
    } else {
      add(c);
    }
  }
  return length > BODY_SHOWN_CHARS ? tooLong : { indented: parts.join('') };
}

// What the body view shows: {text, note}; the note says why it is not indented, and where
// the whole body is when it is cut.
function bodyView(text) {
  const { indented, reason } = pretty(text);
  if (indented !== undefined) return { text: indented, note: '' };
  if (text.length > BODY_SHOWN_CHARS) {
    return { text: text.slice(0, BODY_SHOWN_CHARS),
             note: `As received (${reason}), cut to its first ${BODY_SHOWN_CHARS / 1048576} MiB of ` +
                   `${text.length} characters: the read API's /v1/deliveries/{message_id} has it whole.` };
  }
  return { text, note: reason === 'not JSON' ? '' : `As received (${reason}).` };
}

export async function delivery(root, messageId) {
  const d = await api('/v1/deliveries/' + encodeURIComponent(messageId));
  const rows = [['Seq', d.seq], ['Message id', d.message_id], ['Origin', d.origin], ['Received', d.received_at],
    ['Signed timestamp', d.webhook_timestamp ? iso(d.webhook_timestamp * 1000) : '–'], ['Event type', d.event_type],
    ['Outcome', d.status], ['Family', d.family], ['Error', d.error]];
  // The envelope, outcome and error first: shown whatever becomes of the body's view.
  root.append(h('h1', {}, 'Delivery ', h('code', {}, d.message_id)),
    pairs('delivery-envelope', rows),
    h('h2', {}, 'Headers (signatures masked)'), h('pre', { id: 'delivery-headers' }, JSON.stringify(d.headers || {}, null, 2)),
    h('h2', {}, 'Body'));
  try {
    let view;
    if (d.body !== null && d.body !== undefined) view = bodyView(d.body);
    else if (d.body_base64) view = bodyView('(not UTF-8; base64) ' + d.body_base64);
    else if (d.message_id.startsWith(' erased:')) {
      // purge-user's placeholder (docs/erasure-and-retention.md): it keeps the seq of an
      // erased delivery so that seq is never handed out again; it never had a body.
      view = { text: `Erased by purge-user on ${d.body_removed_at}: this row only keeps the seq of a delivery ` +
        'removed with its user\'s data.', note: '' };
    } else view = { text: `Removed by retention on ${d.body_removed_at}; its SHA-256 was ${d.body_sha256}.`, note: '' };
    root.append(view.note ? h('p', { id: 'delivery-body-note', class: 'muted' }, view.note) : '',
      h('pre', { id: 'delivery-body' }, view.text));
  } catch (e) {
    root.append(h('p', { id: 'delivery-body', class: 'error' }, 'Could not show the body: ' + e.message));
  }
  const changes = await api('/v1/deliveries/' + encodeURIComponent(messageId) + '/changes');
  root.append(h('h2', {}, 'Rows it wrote (change feed)'),
    table('delivery-changes', ['Change', 'Table', 'Key', 'Op', 'Rows', 'From', 'To'], changes.items.map((c) =>
      h('tr', { class: 'change' }, h('td', {}, c.change_id), h('td', {}, c.table_name), h('td', {}, c.row_key),
        h('td', {}, c.op), h('td', {}, c.row_count), h('td', {}, c.from || ''), h('td', {}, c.to || '')))));

  const forwards = [];
  const unread = [];  // destinations whose entries did not load
  const destinations = await api('/v1/forwarding');
  // A destination whose [[forward]] block was removed: its entries shown, no action reaches it.
  const unconfigured = new Set(destinations.destinations.filter((x) => x.configured === false).map((x) => x.destination));
  for (const dest of destinations.destinations) {
    // This delivery's entries, every state, asked of the server by seq (it once read each
    // state's first 1,000 and kept this seq's: a delivery past them showed "None waiting").
    let cursor;
    do {
      const page = await entriesOf(dest.destination, { seq: d.seq, limit: 1000, cursor });
      if (page.error) unread.push(`${dest.destination}: ${page.error}`);
      forwards.push(...page.items);
      cursor = page.next_cursor;
    } while (cursor);
  }
  root.append(h('h2', {}, 'Forwarded messages it produced (not yet delivered)'),
    forwards.length ? table('delivery-forwards', ['Outbox id', 'Destination', 'State', 'Attempts', 'Last error'],
      forwards.map((e) => h('tr', { class: 'forward', 'data-destination': e.destination }, h('td', {}, e.outbox_id),
        h('td', {}, unconfigured.has(e.destination) ? `${e.destination} (not configured)` : e.destination),
        h('td', {}, e.state), h('td', {}, e.attempts), h('td', { class: 'error-text' }, errorText(e.last_error)))))
      : h('p', { id: 'delivery-forwards', class: 'muted' }, 'None waiting: sent, or none was made.'),
    unread.length ? h('p', { class: 'error' }, 'Could not load the entries of ' + unread.join('; ')) : '');
  if (isAdmin() && forwards.length) {
    const byDestination = {};
    for (const e of forwards) if (!unconfigured.has(e.destination)) (byDestination[e.destination] ||= []).push(e.outbox_id);
    for (const [destination, ids] of Object.entries(byDestination)) {
      root.append(button(`Requeue its forwards to ${destination}`, 'forward-requeue',
        { destination, ids: ids.join(',') }, null, { 'data-destination': destination }));
    }
  }
}

// ---- Users: identity, connections, devices, backfills, charts per resource.

const SUMMARY_VALUE = {
  sleep: ['total', 'duration'], activity: ['steps', 'calories_total'], workouts: ['calories', 'duration', 'distance'],
};

function summaryValue(resource, data) {
  for (const key of SUMMARY_VALUE[resource] || []) {
    if (typeof data[key] === 'number') return { key, value: data[key] };
  }
  return { key: 'count', value: 1 };
}

export async function users(root, _arg, query) {
  const q = query.get('q') || '';
  // by=user_id: a link to one user (of several sharing a client user id), which a third
  // user's client user id equal to that user id must not take.
  const byUserId = query.get('by') === 'user_id';
  const here = (range) => (byUserId ? { q, by: 'user_id', range } : { q, range });
  const rangeName = RANGES[query.get('range')] ? query.get('range') : '7d';
  const input = h('input', { id: 'user-query', value: q, placeholder: 'user id or client user id' });
  const form = h('form', { class: 'search' }, h('label', {}, 'User', input),
    h('button', { id: 'user-search-button', type: 'submit' }, 'Find'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const typed = input.value.trim();
    go('users', '', typed === q ? here(rangeName) : { q: typed, range: rangeName });
  });
  root.append(h('h1', {}, 'Users'), form);
  if (!q) return;
  // The user of this id first: another user whose client user id equals it (a backend's
  // ids may be UUIDs too) is named below it, never shown in its place (as the Deliveries
  // page's search by user takes a known user id).
  const exact = (await api('/v1/users', { user_id: q })).items;
  const byClient = byUserId ? [] : (await api('/v1/users', { client_user_id: q })).items
    .filter((u) => !exact.some((x) => x.user_id === u.user_id));
  const found = [...exact, ...byClient];
  if (!found.length) { root.append(h('p', { id: 'user-identity', class: 'muted' }, 'No user with this id or client user id.')); return; }
  const user = found[0];
  const userId = user.user_id;
  const about = await api('/v1/users/' + encodeURIComponent(userId));
  const backfills = await api('/v1/users/' + encodeURIComponent(userId) + '/backfills');
  const inventory = await api('/v1/users/' + encodeURIComponent(userId) + '/series');
  root.append(
    table('user-identity', ['User id', 'Client user id', 'Team', 'First seen', 'Last seen'], [h('tr', {},
      h('td', {}, userId), h('td', {}, user.client_user_id || '–'), h('td', {}, user.team_id || '–'),
      h('td', {}, user.first_seen || '–'), h('td', {}, user.last_seen || '–'))]),
    ...(found.length > 1 ? [h('p', { id: 'user-others', class: 'muted' },
      exact.length ? `This is the user of this id; ${byClient.length} other${byClient.length === 1 ? ' has' : 's have'} ` +
        'it as client user id: '
        : `${found.length} users have this client user id; showing the first. The others: `,
      found.slice(1).flatMap((u, i) => [i ? ', ' : '',
        h('a', { href: '#/users?' + new URLSearchParams({ q: u.user_id, by: 'user_id', range: rangeName }) }, u.user_id)]))] : []),
    h('h2', {}, 'Connections'), table('user-connections', ['Provider', 'Status', 'Error'], about.connections.map((c) =>
      h('tr', {}, h('td', {}, c.provider), h('td', {}, c.status), h('td', { class: 'error-text' }, c.error_message || '')))),
    h('h2', {}, 'Devices'), table('user-devices', ['Id', 'Provider', 'Source type', 'Model'], about.devices.map((d) =>
      h('tr', {}, h('td', {}, d.id), h('td', {}, d.provider || ''), h('td', {}, d.source_type || ''), h('td', {}, d.device_model || '')))),
    // The answer stops at 8 MiB (decision 102): what is left out is said, not passed over.
    ...(about.truncated ? [h('p', { id: 'user-truncated', class: 'error' },
      'Not all connections and devices are shown: they pass the 8 MiB an answer may hold. ' +
      'healthhook query devices --user USER (and query connections) lists them all.')] : []),
    h('h2', {}, 'Backfills'), table('user-backfills', ['Resource', 'Provider', 'From', 'To', 'Job'], backfills.items.map((b) =>
      h('tr', {}, h('td', {}, b.resource), h('td', {}, b.provider), h('td', {}, b.start), h('td', {}, b.end),
        h('td', { class: 'error-text' }, [b.job_state, b.job_error].filter(Boolean).join(': '))))));
  if (isAdmin()) root.append(userActions(userId, about, inventory));

  const end = Date.now(), start = end - RANGES[rangeName];
  root.append(h('h2', {}, 'Data'), h('div', { class: 'ranges' }, Object.keys(RANGES).map((r) =>
    h('button', { type: 'button', 'data-range': r, class: r === rangeName ? 'current' : '',
                  onclick: () => go('users', '', here(r)) }, r))));
  const rowsBox = h('div', { id: 'chart-rows' });
  const resources = [...new Set(inventory.series.map((s) => s.resource))];
  for (const resource of resources) {
    const chart = await api(`/v1/users/${encodeURIComponent(userId)}/timeseries/${encodeURIComponent(resource)}/chart`,
                            { start: new Date(start).toISOString(), end: new Date(end).toISOString(), buckets: 600 });
    const series = chart.series.map((s) => ({
      name: `${s.provider}/${s.source_type}`, provider: s.provider, source_type: s.source_type,
      points: s.points.map(([t, count, min, max, mean, last]) => ({ t, count, min, max, value: mean, last })),
    }));
    if (series.every((s) => s.points.length === 0)) {
      // Text values and blood pressure (two values) have no single number to draw: said so,
      // with their samples one click away, rather than an empty chart that reads as "no data".
      const list = h('div', {});
      root.append(h('div', { class: 'chart-box not-charted', 'data-resource': resource },
        h('h3', {}, resource),
        h('p', { class: 'muted' }, 'Not charted: no numeric values in this range (text values and blood pressure ' +
          'have no single number to draw).'),
        h('button', { type: 'button', class: 'list-samples', onclick: async () => {
          const rows = await api(`/v1/users/${encodeURIComponent(userId)}/timeseries/${encodeURIComponent(resource)}`,
            { start: new Date(start).toISOString(), end: new Date(end).toISOString(), limit: 100 });
          list.replaceChildren(table('not-charted-rows', ['Time', 'Value', 'Extra', 'Unit', 'Source', 'Seq'],
            rows.items.map((r) => h('tr', {}, h('td', {}, r.timestamp), h('td', {}, r.value == null ? '–' : String(r.value)),
              h('td', {}, r.extra == null ? '' : JSON.stringify(r.extra)), h('td', {}, r.unit || ''),
              h('td', {}, `${r.provider}/${r.source_type}`), h('td', {}, r.seq)))));
        } }, 'List the samples (first 100)'),
        list));
      continue;
    }
    const svg = lineChart(series, { start, end }, {
      title: `${resource} (points: mean per ${seconds(chart.bucket_ms / 1000)} bucket; whiskers: min–max)`,
      data: { resource }, width: 900,
      // The bucket's samples, every one of them: a page at a time, "More" for the next
      // (a bucket of a long range holds thousands), the count said beside what is shown.
      onPoint: async (s, p) => {
        const list = table('chart-rows-table', ['Time', 'Value', 'Unit', 'Seq'], []);
        const body = list.querySelector('tbody');
        const shown = h('p', { class: 'muted', id: 'chart-rows-shown' });
        const more = h('button', { type: 'button', id: 'chart-rows-more', hidden: true }, 'More');
        rowsBox.replaceChildren(h('h3', {}, `${resource} from ${s.name}: ${p.count} samples`), list, shown, more);
        let listed = 0;
        const load = async (cursor) => {
          more.hidden = true;  // one page at a time
          const rows = await api(`/v1/users/${encodeURIComponent(userId)}/timeseries/${encodeURIComponent(resource)}`,
            { start: new Date(p.t).toISOString(), end: new Date(p.last + 1).toISOString(), provider: s.provider,
              source_type: s.source_type, limit: 500, cursor });
          body.append(...rows.items.map((r) => h('tr', {}, h('td', {}, r.timestamp),
            h('td', {}, String(r.value)), h('td', {}, r.unit || ''), h('td', {}, r.seq))));
          listed += rows.items.length;
          shown.textContent = rows.next_cursor ? `${listed} of ${p.count} shown` : `all ${listed} shown`;
          more.hidden = !rows.next_cursor;
          more.onclick = () => load(rows.next_cursor);
        };
        await load(undefined);
      },
    });
    root.append(h('div', { class: 'chart-box' }, svg));
  }
  const summaryResources = [...new Set(inventory.summaries.map((s) => s.resource))];
  for (const resource of summaryResources) {
    const page = await api(`/v1/users/${encodeURIComponent(userId)}/summaries/${encodeURIComponent(resource)}`,
                           { start: new Date(start).toISOString(), end: new Date(end).toISOString(),
                             limit: SUMMARIES_PER_CHART });
    if (!page.items.length) {  // an empty chart would read as days of zero
      root.append(h('div', { class: 'chart-box not-charted', 'data-resource': resource }, h('h3', {}, resource),
        h('p', { class: 'muted' }, 'No summaries in this range.')));
      continue;
    }
    const bySource = {};
    let label = 'count';
    for (const row of page.items) {
      const name = `${row.provider}/${row.source_type}`;
      const data = typeof row.data === 'string' ? JSON.parse(row.data) : row.data;
      const t = Date.parse(row.start || data.calendar_date || data.date);
      if (Number.isNaN(t)) continue;
      const { key, value } = summaryValue(resource, data);
      label = key;
      const s = (bySource[name] ||= { name, bars: [] });
      const day = Math.floor(t / DAY) * DAY;
      // A day may hold several (two workouts): the bar adds them up, and a click shows each.
      const existing = s.bars.find((b) => b.day === day);
      if (existing) { existing.value += value; existing.rows.push(row); } else s.bars.push({ day, value, rows: [row] });
    }
    const svg = barChart(Object.values(bySource), { start, end }, {
      title: `${resource}: ${label} per day`, data: { resource }, width: 900,
      onBar: (s, b) => rowsBox.replaceChildren(
        h('h3', {}, `${resource} from ${s.name}: ${b.rows.length} ${b.rows.length === 1 ? 'summary' : 'summaries'}`),
        ...b.rows.map((row) => h('pre', { class: 'summary-row' }, JSON.stringify(row, null, 2)))),
    });
    // More than one page in the range: the days after the last summary read would be drawn
    // as empty, as if nothing was stored there. Said under the chart instead (summaries come
    // in order of their start, so what is missing is the range's end).
    const cut = page.next_cursor ? h('p', { class: 'error chart-truncated', 'data-resource': resource },
      `Showing the first ${SUMMARIES_PER_CHART.toLocaleString('en-US')} summaries; later days are not drawn — ` +
      'narrow the range.') : null;
    root.append(h('div', { class: 'chart-box' }, svg, cut));
  }
  if (!resources.length && !summaryResources.length) root.append(h('p', { class: 'muted' }, 'No samples or summaries stored.'));
  root.append(rowsBox);
}

function userActions(userId, about, inventory) {
  const resource = h('input', { id: 'backfill-resources', placeholder: 'heartrate,sleep' });
  const since = h('input', { id: 'backfill-since', type: 'date' });
  // Typed, with the providers known of the user offered: a user with no stored connection
  // (the server then asks for a provider) can be backfilled all the same.
  const known = [...new Set([...about.connections, ...about.devices, ...inventory.series, ...inventory.summaries]
    .map((x) => x.provider).filter(Boolean))].sort();
  const provider = h('input', { id: 'backfill-provider', list: 'backfill-providers', autocomplete: 'off',
    placeholder: about.connections.length ? 'every connected provider' : 'required: no connection is stored' });
  const suggestions = h('datalist', { id: 'backfill-providers' }, known.map((p) => h('option', { value: p })));
  const backfill = h('button', { type: 'button', 'data-action': 'backfill', onclick: async () => {
    try {
      const outcome = await act('backfill', { user_id: userId, resources: resource.value, since: since.value,
                                             provider: provider.value.trim() });
      flash('Backfill: ' + outcomeText(outcome));
    } catch (err) { flash('Backfill failed: ' + err.message, true); }
  } }, 'Queue backfill');
  return h('section', { class: 'actions' }, h('h2', {}, 'Actions'),
    h('div', {}, h('label', {}, 'Resources', resource), h('label', {}, 'Since', since), h('label', {}, 'Provider', provider, suggestions), backfill),
    h('div', {}, button('Refresh from the providers now', 'refresh', { user_id: userId })));
}

// ---- Forwarding: destinations, entries by state, requeue, pause and resume.

export async function forwarding(root, _arg, query) {
  const state = ['pending', 'dead', 'dropped'].includes(query.get('state')) ? query.get('state') : 'dead';
  root.append(h('h1', {}, 'Forwarding'));
  const data = await api('/v1/forwarding');
  if (!data.destinations.length) root.append(h('p', { class: 'muted' }, 'No [[forward]] destination is configured.'));
  const redraw = () => window.dispatchEvent(new HashChangeEvent('hashchange'));
  for (const d of data.destinations) {
    const name = d.destination;
    const figures = h('table', { class: 'destination', 'data-destination': name, 'data-paused': d.paused ? 'true' : 'false' },
      h('thead', {}, h('tr', {}, ['Destination', 'State', 'Pending', 'Dead', 'Dropped', 'Oldest pending'].map((t) => h('th', {}, t)))),
      h('tbody', {}, h('tr', {}, h('td', {}, name), h('td', { 'data-figure': 'state' }, destinationState(d)),
        h('td', { 'data-figure': 'pending' }, d.pending), h('td', { 'data-figure': 'dead' }, d.dead),
        h('td', { 'data-figure': 'dropped' }, d.dropped), h('td', {}, ago(d.oldest_pending_created_at_ms)))));
    const section = h('section', { class: 'destination-box' }, h('h2', {}, name), figures);
    const actionable = isAdmin() && d.configured !== false;
    if (d.configured === false) {
      section.append(h('p', { class: 'muted' }, 'Not in the configuration: nothing sends its entries, and no action reaches it.'));
    }
    if (actionable) {
      section.append(h('div', { class: 'actions' },
        button('Requeue all dead', 'forward-requeue', { destination: name, state: 'dead' }, redraw,
               { 'data-destination': name, 'data-state': 'dead' }),
        button('Requeue all dropped', 'forward-requeue', { destination: name, state: 'dropped' }, redraw,
               { 'data-destination': name, 'data-state': 'dropped' }),
        d.paused
          ? button('Resume', 'forward-resume', { destination: name }, redraw, { 'data-destination': name })
          : button('Pause', 'forward-pause', { destination: name }, redraw, { 'data-destination': name })));
    }
    const tabs = h('div', { class: 'tabs' }, ['pending', 'dead', 'dropped'].map((s) =>
      h('a', { href: `#/forwarding?state=${s}`, class: s === state ? 'current' : '' }, `${s} (${d[s]})`)));
    if (state === 'dropped') {
      // Dropped messages are deleted: the outbox keeps only ranges of deliveries (seq) with a
      // count, so there is no list of entries to show (an empty table read as "none dropped").
      section.append(tabs, h('p', { class: 'muted dropped-note' }, d.dropped
        ? `${d.dropped} message${d.dropped === 1 ? ' was' : 's were'} dropped by the outbox's budget (max_outbox_mib). ` +
          'A dropped message is deleted, not kept: what remains is ranges of deliveries (seq) with a count, ' +
          "which `healthhook forward list --dropped` shows. “Requeue all dropped” makes them again " +
          'from the change feed or the inbox.'
        : 'Nothing dropped: the outbox stayed within its budget (max_outbox_mib).'));
      root.append(section);
      continue;
    }
    const entries = await entriesOf(name, { state, limit: 100 });
    if (entries.error) {
      section.append(tabs, h('p', { class: 'error entries-error' }, 'Could not load its entries: ' + entries.error));
      root.append(section);
      continue;
    }
    const headings = ['Outbox id', 'Seq', 'Event type', 'What', 'Attempts', 'Next attempt', 'Last error'];
    if (actionable) headings.push('');
    section.append(tabs, table('', headings, entries.items.map((e) => h('tr', { class: 'entry', 'data-id': e.outbox_id, 'data-state': e.state },
      h('td', {}, e.outbox_id), h('td', {}, e.seq), h('td', {}, e.event_type || ''), h('td', {}, `${e.table} ${e.key}`),
      h('td', {}, e.attempts), h('td', {}, nextAttempt(e.state, e.next_attempt_at_ms)),
      h('td', { class: 'error-text' }, errorText(e.last_error)),
      actionable ? h('td', {}, button('Requeue', 'forward-requeue', { destination: name, ids: String(e.outbox_id) }, redraw)) : null)),
      { class: 'entries' }));
    if (entries.next_cursor) section.append(h('p', { class: 'muted' }, 'The first 100 are shown.'));
    root.append(section);
  }
}

// ---- Follow-ups: jobs by state with their last error.

export async function jobs(root, _arg, query) {
  const state = ['queued', 'running', 'dead', 'done'].includes(query.get('state')) ? query.get('state') : 'dead';
  const redraw = () => window.dispatchEvent(new HashChangeEvent('hashchange'));
  root.append(h('h1', {}, 'Follow-up jobs'), h('div', { class: 'tabs' }, ['queued', 'running', 'dead', 'done'].map((s) =>
    h('a', { href: `#/jobs?state=${s}`, class: s === state ? 'current' : '' }, s))));
  if (isAdmin()) root.append(h('div', { class: 'actions' }, button('Requeue every dead job', 'jobs-requeue-dead', {}, redraw)));
  const page = await api('/v1/jobs', { state, limit: 200 });
  const headings = ['Job', 'Kind', 'Key', 'Attempts', 'Next attempt', 'Last error'];
  if (isAdmin()) headings.push('');
  root.append(table('jobs-table', headings, page.items.map((j) => h('tr', { class: 'job', 'data-id': j.job_id },
    h('td', {}, j.job_id), h('td', {}, j.kind), h('td', {}, j.job_key), h('td', {}, j.attempts),
    h('td', {}, nextAttempt(j.state, j.next_attempt_at_ms)), h('td', { class: 'error-text' }, errorText(j.last_error)),
    isAdmin() && j.state !== 'running' ? h('td', {}, button('Requeue', 'jobs-requeue-dead', { job_id: String(j.job_id) }, redraw)) : null))));
  if (page.truncated) root.append(h('p', { class: 'muted' }, 'The first 200 are shown.'));
}

export const pages = { overview, deliveries, delivery, users, forwarding, jobs };
