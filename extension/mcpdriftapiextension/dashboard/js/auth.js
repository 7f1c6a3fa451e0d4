// Credentials for an API behind an auth extension. The dashboard's files
// are public (they hold no data); /api/ is guarded by whatever the
// extension's auth names: bearertokenauth wants "Authorization: Bearer
// <token>", basicauth "Authorization: Basic <user:password>". The operator
// enters one of them; it is kept in sessionStorage (this tab only, gone when
// it closes) and sent with every API request.

import { h } from './dom.js';

const KEY = 'mcpdrift.authorization';
const listeners = new Set();

export function authorization() {
  try {
    return sessionStorage.getItem(KEY) || '';
  } catch {
    return ''; // storage disabled: no credential
  }
}

// scheme is "Bearer", "Basic" or "" when no credential is kept.
export const scheme = () => authorization().split(' ', 1)[0];

function store(value) {
  try {
    if (value) sessionStorage.setItem(KEY, value);
    else sessionStorage.removeItem(KEY);
  } catch {
    // storage disabled: the credential lives as long as nothing
  }
  listeners.forEach((f) => f());
}

export const signOut = () => store('');
export const onChange = (f) => listeners.add(f);

// required is true once the API has asked for a credential (the top bar
// offers Sign in only then: most control planes on loopback have no auth).
let asked = false;
export const required = () => asked || !!authorization();
export function markRequired() {
  if (asked) return;
  asked = true;
  listeners.forEach((f) => f());
}

// basicValue encodes user:password as UTF-8, then base64 (RFC 7617).
function basicValue(user, password) {
  const bytes = new TextEncoder().encode(user + ':' + password);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return 'Basic ' + btoa(bin);
}

// signInForm asks for a bearer token or a user name and password; onDone
// runs once the credential is stored.
export function signInForm({ message, onDone, onCancel }) {
  const token = h('input', { type: 'password', name: 'token', autocomplete: 'off', spellcheck: 'false', 'aria-label': 'Bearer token' });
  const user = h('input', { type: 'text', name: 'username', autocomplete: 'username', 'aria-label': 'User name' });
  const pass = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', 'aria-label': 'Password' });
  const tokenRow = h('label', null, 'Token', token);
  const basicRows = h('div', { class: 'signin', hidden: true }, h('label', null, 'User name', user), h('label', null, 'Password', pass));
  const pick = (mode) => {
    tokenRow.hidden = mode !== 'bearer';
    basicRows.hidden = mode !== 'basic';
  };
  const radio = (mode, label, checked) => h('label', { class: 'radio' },
    h('input', { type: 'radio', name: 'scheme', value: mode, checked, onchange: () => pick(mode) }), label);
  const form = h('form', { class: 'signin', 'aria-label': 'Sign in to the control plane' },
    message ? h('p', { class: 'note' }, message) : null,
    h('fieldset', null, h('legend', null, 'Credential'), radio('bearer', 'Bearer token', true), radio('basic', 'User name and password', false)),
    tokenRow, basicRows,
    h('p', { class: 'faint' }, 'Kept in this browser tab only (sessionStorage) and sent as the Authorization header of API requests.'),
    h('div', { class: 'form-actions' },
      h('button', { type: 'submit', class: 'btn btn-primary' }, 'Sign in'),
      onCancel ? h('button', { type: 'button', class: 'btn', onclick: onCancel }, 'Cancel') : null));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const mode = form.elements.scheme.value;
    if (mode === 'bearer' && token.value.trim()) store('Bearer ' + token.value.trim());
    else if (mode === 'basic' && user.value) store(basicValue(user.value, pass.value));
    else return;
    onDone();
  });
  return form;
}
