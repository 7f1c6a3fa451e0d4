// The server list: every probed MCP server with its status, worst first.

import { api } from './api.js';
import { ago, chip, count, digest, h, hash, millis, replace, severityChip, stacked, statusChip } from './dom.js';
import { worstVariant } from './mixed.js';
import { empty } from './notice.js';

// Worst first, as controlplane.Status documents.
const ORDER = ['DOWN', 'DRIFTED', 'PENDING', 'UP'];

export async function serversView(root, { signal }) {
  const tiles = h('div', { class: 'tiles' });
  const body = h('div');
  replace(root,
    h('div', { class: 'page-head' },
      h('div', null, h('h1', null, 'MCP servers'), h('div', { class: 'sub' }, 'Contracts probed by this Collector, worst first.')),
      tiles),
    body);

  async function load() {
    const list = await api('servers', { signal });
    replace(tiles, ...['total', ...ORDER.map((s) => s.toLowerCase())].map((k) =>
      h('div', { class: 'tile st-' + k.toUpperCase(), dataset: { summary: k } },
        h('div', { class: 'n' }, count(list.summary[k])), h('div', { class: 'l' }, k))));
    if (!list.servers.length) {
      replace(body, empty('No servers', 'The mcpdrift receiver has no targets.'));
      return;
    }
    const servers = [...list.servers].sort((a, b) =>
      ORDER.indexOf(a.status) - ORDER.indexOf(b.status) || a.name.localeCompare(b.name));
    replace(body, h('div', { class: 'panel table-wrap' }, stacked(h('table', { class: 'servers' },
      h('thead', null, h('tr', null, ['Status', 'Server', 'Contract', 'Open drift', 'Last probe', 'Baseline'].map((c) => h('th', null, c)))),
      h('tbody', null, servers.map(row))))));
  }
  await load();
  return { refresh: load };
}

function row(s) {
  const link = hash('servers', s.name);
  const c = s.contract;
  const p = s.probe;
  return h('tr', { class: 'link-row', dataset: { server: s.name }, onclick: (ev) => { if (!ev.target.closest('a')) location.hash = link; } },
    h('td', null, statusChip(s.status), s.mixed ? mixedMark(s) : null),
    h('td', null, h('a', { href: link, class: 'server-name' }, s.name), h('span', { class: 'sub mono' }, s.url)),
    h('td', null, c
      ? [h('span', null, c.server_info.name + ' ' + c.server_info.version), h('span', { class: 'sub' }, count(c.definitions.tools) + ' tools · ', digest(c.digest))]
      : h('span', { class: 'faint' }, 'not known yet')),
    h('td', null, s.open_drift
      ? [severityChip(s.open_drift.severity), h('span', { class: 'sub' }, ago(s.open_drift.at))]
      : h('span', { class: 'faint' }, '—')),
    h('td', null, p
      ? [ago(p.last), p.error_class === 'none'
        ? h('span', { class: 'sub' }, millis(p.duration_ms))
        : h('span', { class: 'sub err', dataset: { downSince: p.failing_since || '' } }, p.error_class.replaceAll('_', ' '),
          p.failing_since ? [' · down since ', ago(p.failing_since)] : null, p.last_success ? [' · last success ', ago(p.last_success)] : null)]
      : h('span', { class: 'faint' }, 'not probed yet')),
    h('td', null, chip(s.baseline_mode, 'plain'), h('span', { class: 'sub nowrap', title: 'the receiver that probes it' }, s.receiver)));
}

// mixedMark flags a mixed fleet, with its worst variant's severity.
function mixedMark(s) {
  const worst = worstVariant(s);
  return h('span', { class: 'sub', dataset: { mixed: worst || '' } },
    h('span', { class: 'badge-mixed', title: 'Two or more contracts served alternately (rolling deploy, canary)' }, 'mixed fleet'),
    worst ? [' ', severityChip(worst, { title: 'the worst change a variant makes against the baseline' })] : null);
}
