// The sign-in page: POST the token as a form; the server sets the session cookie
// (HttpOnly, SameSite=Strict) and the console loads at /console/, on the page the address
// named (its #/… part) if any.
const form = document.getElementById('sign-in-form');
const error = document.getElementById('sign-in-error');

// An action refused because the session had ended (session.js act()): not done, said so.
const undone = sessionStorage.getItem('healthhook-undone');
if (undone) {
  sessionStorage.removeItem('healthhook-undone');
  error.textContent = `Not done: ${undone}. Your session had ended; sign in and do it again.`;
  error.hidden = false;
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  error.hidden = true;
  const token = document.getElementById('token').value;
  const response = await fetch('/console/sign-in', {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      'X-Requested-With': 'healthhook-console',
    },
    body: 'token=' + encodeURIComponent(token),
    credentials: 'same-origin',
  });
  if (response.ok) {
    // The page a link asked for (#/forwarding?state=dead) once signed in: the same URL
    // loaded again serves the console now.
    if (window.location.pathname === '/console/' && window.location.hash) window.location.reload();
    else window.location.replace('/console/');
    return;
  }
  // Any other refusal says why (every session taken by an admin's, say).
  const reason = response.status === 401 ? '' : ((await response.json().catch(() => ({}))).error || '');
  error.textContent = response.status === 401 ? 'Wrong token.'
    : 'Sign-in failed (' + response.status + ')' + (reason ? ': ' + reason : '') + '.';
  error.hidden = false;
});
