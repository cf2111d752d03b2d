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
  const qs = query.toString();
  return json(await fetch('/console' + path + (qs ? '?' + qs.replaceAll('+', '%20') : ''),
                          { credentials: 'same-origin' }));
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
  return json(response);
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
