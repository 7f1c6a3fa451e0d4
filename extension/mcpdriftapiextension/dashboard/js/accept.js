// Accept: an operator closes the server's open drift (POST
// api/v1/servers/{name}/accept) naming the drift they looked at, so that a
// drift that arrived since is never accepted unseen (the API answers 409).
// Behind an auth extension the request carries the operator's credential;
// a 401 asks for one and tries again.

import { api, route } from './api.js';
import { signInForm } from './auth.js';
import { digest, h, replace } from './dom.js';
import { banner, bannerAction } from './notice.js';

// acceptControls returns the Accept button (for the drift's title row) and
// the panel its form opens in (below the drift's summary); null when the
// drift is not open.
export function acceptControls(d, server, done) {
  if (d.state !== 'open') return null;
  if (!server.open_drift || server.open_drift.id !== d.id) {
    return { button: h('p', { class: 'faint' }, 'A newer drift is open; accepting it closes this one too.'), panel: null };
  }
  const panel = h('div', { class: 'accept' });
  const button = h('button', { type: 'button', class: 'btn btn-primary', dataset: { action: 'accept' } }, 'Accept drift…');
  button.addEventListener('click', () => {
    button.hidden = true;
    replace(panel, acceptForm(d, server, done, () => { replace(panel); button.hidden = false; }));
    panel.querySelector('textarea').focus();
  });
  return { button, panel };
}

function acceptForm(d, server, done, cancel) {
  const comment = h('textarea', { name: 'comment', maxlength: 4096, placeholder: 'why this change is fine (kept with the drift, for audit)' });
  const by = h('input', { type: 'text', name: 'by', maxlength: 256, autocomplete: 'name', placeholder: 'your name' });
  const status = h('div', { class: 'note', role: 'status' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', dataset: { action: 'confirm-accept' } }, 'Accept drift');
  const form = h('form', { class: 'accept-form', 'aria-label': 'Accept drift' },
    h('p', { class: 'note' }, server.baseline_mode === 'pinned'
      ? ['The served contract ', digest(d.current_contract), ' becomes the baseline: drift is reported against it from now on.']
      : ['The baseline already follows the server (advance); accepting acknowledges the drift and the server shows UP again.']),
    h('label', null, 'Comment', comment),
    h('label', null, 'Accepted by', h('span', { class: 'hint' }, 'Recorded when the Collector\'s auth extension does not name you.'), by),
    h('div', { class: 'form-actions' }, submit, h('button', { type: 'button', class: 'btn', onclick: cancel }, 'Cancel')));

  const send = async () => {
    submit.disabled = true;
    replace(status, 'Accepting…');
    const body = { drift: d.id };
    if (comment.value.trim()) body.comment = comment.value.trim();
    if (by.value.trim()) body.by = by.value.trim();
    try {
      const res = await api(route('servers', server.name, 'accept'), { method: 'POST', body });
      banner('success', 'Accepted ', res.accepted.length === 1 ? 'drift ' + res.accepted[0].id : res.accepted.length + ' drifts',
        ' as ', h('strong', null, res.by), '. Baseline ', digest(res.baseline_digest), ', status ', res.status, '.');
      done();
    } catch (err) {
      submit.disabled = false;
      if (err.status === 401) {
        replace(status, h('p', null, 'Accepting needs a credential. ', h('span', { class: 'faint' }, err.message)), signInForm({ onDone: send }));
      } else if (err.status === 409) {
        replace(status);
        bannerAction('error', err.message, 'Reload', done);
      } else if (err.name !== 'AbortError') {
        replace(status, h('span', { class: 'err' }, err.message));
      }
    }
  };
  form.addEventListener('submit', (ev) => { ev.preventDefault(); send(); });
  // The status (which may hold a sign-in form) stays outside the form:
  // forms do not nest.
  return h('div', null, form, status);
}
