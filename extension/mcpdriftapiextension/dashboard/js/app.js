// The dashboard's entry point: hash routes, the info the views share
// (which parts of the API this Collector serves), periodic refresh, and
// the top bar (breadcrumbs, sign in / out).
//
//   #/                              servers
//   #/servers/{name}                a server, Drift tab, newest drift
//   #/servers/{name}/drift/{id}     a server, Drift tab, one drift
//   #/servers/{name}/contract       a server, Contract tab

import { api } from './api.js';
import { onChange, required, scheme, signInForm, signOut } from './auth.js';
import { h, hash, hours, replace } from './dom.js';
import { banner, failure } from './notice.js';
import { serverView } from './server.js';
import { serversView } from './servers.js';

const REFRESH_MS = 10000;

const main = document.getElementById('main');
let current = null; // { abort, refresh } of the view on screen

function parseRoute() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'servers' && parts[1]) {
    return { view: 'server', name: parts[1], tab: parts[2] === 'contract' ? 'contract' : 'drift', driftId: parts[2] === 'drift' ? parts[3] : undefined };
  }
  return { view: 'servers' };
}

let shownRoute = null;

async function render() {
  if (current) current.abort.abort();
  if (location.hash !== shownRoute) document.getElementById('banner').replaceChildren(); // messages belong to the page they were about
  shownRoute = location.hash;
  const abort = new AbortController();
  const me = { abort, refresh: null };
  current = me;
  const r = parseRoute();
  crumbs(r);
  // Tests (and anyone scripting the page) wait for data-ready="true" on
  // the route they opened.
  main.dataset.ready = 'false';
  main.dataset.route = location.hash || '#/';
  main.dataset.view = r.view;
  replace(main, h('p', { class: 'loading' }, 'Loading…'));
  try {
    const info = await loadInfo(abort.signal); // parts come and go with the pipelines
    const ctx = { ...r, signal: abort.signal, info, rerender: render };
    const shown = r.view === 'server' ? await serverView(main, ctx) : await serversView(main, ctx);
    if (shown && shown.ready) await shown.ready;
    if (current !== me) return;
    me.refresh = shown && shown.refresh;
    stamp();
  } catch (err) {
    if (err.name === 'AbortError' || current !== me) return;
    replace(main, failure(err, render));
  }
  main.dataset.ready = 'true';
}

async function loadInfo(signal) {
  const i = await api('info', { signal });
  const part = (label, p, extra) => (p.available ? [label + ': ', p.components.join(', '), extra || ''] : [label + ': not available']);
  replace(document.getElementById('footer'),
    'mcpdrift control plane · API ', i.api_version, ' · ', part('drift', i.drift), ' · ',
    part('impact', i.impact, i.impact.available ? ' (window ' + hours(i.impact.window_hours) + ')' : ''),
    ' · ', h('a', { href: 'api/v1/openapi.json' }, 'OpenAPI'));
  return i;
}

function crumbs(r) {
  const nav = document.getElementById('crumbs');
  if (r.view === 'servers') {
    replace(nav, h('span', { class: 'current' }, 'Servers'));
    return;
  }
  replace(nav, h('a', { href: '#/' }, 'Servers'), h('span', { class: 'sep' }, '/'),
    r.tab === 'contract' || !r.driftId
      ? h('span', { class: 'current' }, r.name)
      : [h('a', { href: hash('servers', r.name) }, r.name), h('span', { class: 'sep' }, '/'), h('span', { class: 'current' }, r.driftId)]);
}

function stamp() {
  replace(document.getElementById('updated'), 'Updated ' + new Date().toLocaleTimeString());
}

function authButton() {
  const b = document.getElementById('auth-button');
  b.hidden = !required();
  const s = scheme();
  b.textContent = s ? 'Sign out (' + s + ')' : 'Sign in';
  b.onclick = s
    ? () => { signOut(); banner('info', 'Signed out: the credential was removed from this tab.'); }
    : () => {
      const close = () => document.getElementById('banner').replaceChildren();
      banner('', signInForm({ onDone: () => { close(); render(); }, onCancel: close }));
    };
}

async function tick() {
  const me = current;
  if (!me || !me.refresh || document.hidden) return;
  try {
    await me.refresh();
    if (current === me) stamp();
  } catch (err) {
    if (err.name !== 'AbortError' && current === me) replace(document.getElementById('updated'), 'Refresh failed: ' + err.message);
  }
}

onChange(authButton);
authButton();
window.addEventListener('hashchange', render);
setInterval(tick, REFRESH_MS);
render();
