// The console's shell: signs the page in from the session, shows the page the hash route
// names (pages.js) and keeps the navigation current.
import { adoptSession, h, json, route, session, signedOut, stopRefresh } from '/console/assets/session.js';
import { pages } from '/console/assets/pages.js';

async function show() {
  stopRefresh();
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
  adoptSession(await json(await fetch('/console/api/session', { credentials: 'same-origin' })));
  document.getElementById('sign-out').addEventListener('click', async () => {
    await fetch('/console/sign-out', { method: 'POST', credentials: 'same-origin',
                                       headers: { 'X-CSRF-Token': session.csrf } });
    signedOut();
  });
  window.addEventListener('hashchange', show);
  window.addEventListener('healthhook-session', show);
  await show();
}

start();
