// What a view shows instead of data: a sign-in form when the API wants a
// credential, the API's own message when a part is unavailable (no
// receiver, no processor registered), or the error with a retry button.

import { signInForm } from './auth.js';
import { h } from './dom.js';

export function failure(err, retry) {
  if (err.status === 401) {
    return h('div', { class: 'panel notice', dataset: { error: 'unauthorized' } },
      h('h2', null, 'Sign in to the control plane'),
      h('p', null, 'This Collector guards its API with an auth extension. ', h('span', { class: 'faint' }, err.message)),
      signInForm({ onDone: retry }));
  }
  const title = err.status === 503 ? 'Not available on this Collector'
    : err.status === 404 ? 'Not found'
      : err.status === 0 ? 'No answer' : 'Error ' + err.status;
  return h('div', { class: 'panel notice error', dataset: { error: err.code || 'error' } },
    h('h2', null, title),
    h('p', null, err.message),
    h('p', null, h('button', { type: 'button', class: 'btn', onclick: retry }, 'Retry')));
}

export const empty = (title, ...text) => h('div', { class: 'panel empty' }, h('h2', null, title), h('p', null, ...text));

// banner shows a message above the page until dismissed or replaced.
export function banner(kind, ...content) {
  const area = document.getElementById('banner');
  const node = h('div', { class: 'banner ' + kind, role: kind === 'error' ? 'alert' : 'status' },
    h('div', null, ...content),
    h('button', { type: 'button', class: 'btn btn-link', onclick: () => node.remove() }, 'Dismiss'));
  area.replaceChildren(node);
  return node;
}

// bannerAction shows a message with a button that dismisses it and runs
// action (Reload, Show it).
export function bannerAction(kind, text, label, action) {
  const node = banner(kind, text + ' ', h('button', { type: 'button', class: 'btn btn-link', onclick: () => { node.remove(); action(); } }, label));
  return node;
}
