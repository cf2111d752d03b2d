// The console's shell: the session, the hash router (#/page/arg?query), and the two ways
// a page talks to the server: api() reads the read API behind the session
// (/console/v1/…), act() runs an action with the session's CSRF token. Elements are built
// with h(), never from HTML strings, so nothing a delivery holds can become markup.
import { pages } from '/console/assets/pages.js';

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

function signedOut() {
  window.location.replace('/console/');
}

async function json(response) {
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
  return json(await fetch('/console/api/actions/' + name, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-CSRF-Token': session.csrf },
    body,
  }));
}

export function isAdmin() { return session.role === 'admin'; }

// Runs `work` every `seconds` while the current page is shown.
export function every(seconds, work) {
  if (refreshTimer) clearInterval(refreshTimer);
  refreshTimer = setInterval(work, seconds * 1000);
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

async function show() {
  if (refreshTimer) { clearInterval(refreshTimer); refreshTimer = null; }
  const { page, arg, query } = route();
  const main = document.getElementById('page');
  main.removeAttribute('data-ready');
  for (const a of document.querySelectorAll('nav a')) {
    a.classList.toggle('current', a.dataset.page === page || (page === 'delivery' && a.dataset.page === 'deliveries'));
  }
  const render = pages[page] || pages.overview;
  const content = h('div', { class: 'page-' + page });
  main.replaceChildren(content);
  try {
    await render(content, arg, query);
  } catch (e) {
    if (e.message !== 'signed out') content.appendChild(h('p', { class: 'error' }, 'Could not load: ' + e.message));
  }
  main.setAttribute('data-ready', page);
}

async function start() {
  const info = await json(await fetch('/console/api/session', { credentials: 'same-origin' }));
  session.role = info.role;
  session.csrf = info.csrf_token;
  document.getElementById('who').textContent =
    info.role === 'admin' ? 'signed in with the admin token' : 'read-only (read token)';
  document.body.classList.toggle('admin', info.role === 'admin');
  document.getElementById('sign-out').addEventListener('click', async () => {
    await fetch('/console/sign-out', { method: 'POST', credentials: 'same-origin',
                                       headers: { 'X-CSRF-Token': session.csrf } });
    signedOut();
  });
  window.addEventListener('hashchange', show);
  await show();
}

start();
