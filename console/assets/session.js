// What every page shares with the shell: the session, elements built with h() (never
// from HTML strings, so nothing a delivery holds can become markup), the read API behind
// the session (api(), /console/v1/…), actions with the session's CSRF token (act()), the
// hash route (#/page/arg?query) and a page's refresh timer.
export const session = { role: null, csrf: null };
let refreshTimer = null;

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') node.addEventListener(k.slice(2), v);
    else if (k === 'class') node.className = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// The sign-in page, keeping the page asked for (#/…) to open once signed in again. At
// /console/ already, only a reload loads it: a change of hash alone loads nothing.
export function signedOut() {
  if (window.location.pathname + window.location.search === '/console/') window.location.reload();
  else window.location.replace('/console/' + window.location.hash);
}

export async function json(response) {
  if (response.status === 401) { signedOut(); throw new Error('signed out'); }
  const text = await response.text();
  const body = text ? JSON.parse(text) : {};
  if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
  return body;
}

// GET /console/<path>?<params> (params: an object; empty values are left out).
export async function api(path, params = {}) {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') query.set(k, v);
  }
  const qs = query.toString() ? '?' + query.toString().replaceAll('+', '%20') : '';
  // An id "." or "..": the browser takes such a segment (%2E too) for a step of the path
  // (/v1/deliveries/.. is /v1/), so the read API's target goes in the query instead
  // (GET /console/api/read?target=…), its dots encoded as the server reads a segment.
  const segments = path.split('/');
  if (segments.some((s) => s === '.' || s === '..')) {
    const target = segments.map((s) => (s === '.' || s === '..' ? s.replaceAll('.', '%2E') : s)).join('/') + qs;
    return json(await fetch('/console/api/read?target=' + encodeURIComponent(target), { credentials: 'same-origin' }));
  }
  return json(await fetch('/console' + path + qs, { credentials: 'same-origin' }));
}

// POST /console/api/actions/<name> with `fields` as a form and the CSRF token.
export async function act(name, fields = {}) {
  const body = Object.entries(fields)
    .map(([k, v]) => encodeURIComponent(k) + '=' + encodeURIComponent(v)).join('&');
  const response = await fetch('/console/api/actions/' + name, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-CSRF-Token': session.csrf },
    body,
  });
  // The session ended (signed out in another tab, expired): the sign-in page says the action
  // was not done, or the operator would take it for done.
  if (response.status === 401) sessionStorage.setItem('healthhook-undone', name.replaceAll('_', ' '));
  // Another tab signed this browser in again (its cookie is the new session's, this tab's
  // token the old one's): said as that, and the page redrawn for the new session's role,
  // instead of "missing or wrong CSRF token" under an "admin" heading that no longer holds.
  if (response.status === 403) {
    const now = await fetch('/console/api/session', { credentials: 'same-origin' });
    if (now.status === 401) { signedOut(); throw new Error('signed out'); }
    const info = now.ok ? await now.json() : null;
    if (info && info.csrf_token !== session.csrf) {
      adoptSession(info);
      throw new Error('not done: this browser signed in again in another tab, now ' + roleText(info.role) +
                      '; the page shows what this session may do');
    }
  }
  return json(response);
}

export function roleText(role) {
  return role === 'admin' ? 'signed in with the admin token' : 'read-only (read token)';
}

// Takes the session the server answers for (GET /console/api/session): the header says its
// role, admin-only controls show or hide with it, and the shell redraws the page
// (the 'healthhook-session' event) when it replaces one.
export function adoptSession(info) {
  const replacing = session.csrf !== null;
  session.role = info.role;
  session.csrf = info.csrf_token;
  document.getElementById('who').textContent = roleText(info.role);
  document.body.classList.toggle('admin', info.role === 'admin');
  if (replacing) window.dispatchEvent(new Event('healthhook-session'));
}

export function isAdmin() { return session.role === 'admin'; }

// Runs `work` every `seconds` while the current page is shown.
export function every(seconds, work) {
  stopRefresh();
  refreshTimer = setInterval(work, seconds * 1000);
}

// Ends the current page's refresh (the shell, before it shows another page).
export function stopRefresh() {
  if (refreshTimer) { clearInterval(refreshTimer); refreshTimer = null; }
}

// The current route: {page, arg, query}.
export function route() {
  const hash = window.location.hash.replace(/^#\/?/, '');
  const [path, qs] = hash.split('?');
  const [page, ...rest] = path.split('/');
  return { page: page || 'overview', arg: rest.map(decodeURIComponent).join('/'), query: new URLSearchParams(qs || '') };
}

export function go(page, arg = '', query = {}) {
  const qs = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== '' && v != null)).toString();
  window.location.hash = '#/' + page + (arg ? '/' + encodeURIComponent(arg) : '') + (qs ? '?' + qs : '');
}
