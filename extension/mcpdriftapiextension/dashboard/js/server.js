// A server's page: its status and contract facts, then the Drift tab
// (history, changes, impact, accept) or the Contract tab (what it serves).

import { api, route } from './api.js';
import { contractTab } from './contract.js';
import { ago, chip, count, digest, fact, h, hash, millis, replace, severityChip, statusChip } from './dom.js';
import { driftTab } from './drift.js';
import { mixedPanel } from './mixed.js';

export async function serverView(root, { name, tab, driftId, signal, info, rerender }) {
  const detail = await api(route('servers', name), { signal });
  const head = h('section', { class: 'panel server-head' });
  const mixed = h('section', { class: 'panel mixed', 'aria-label': 'Mixed fleet' });
  const tabs = h('nav', { class: 'tabs', role: 'tablist' },
    tabLink('Drift', hash('servers', name), tab === 'drift', detail.history.drifts),
    tabLink('Contract', hash('servers', name, 'contract'), tab === 'contract'));
  const body = h('div', { role: 'tabpanel', dataset: { tab } });
  replace(root, head, mixed, tabs, body);
  renderHead(head, detail);
  mixedPanel(mixed, detail);

  const shown = tab === 'contract'
    ? contractTab(body, detail)
    : await driftTab(body, { server: detail, driftId, signal, info, rerender });
  return {
    ready: shown && shown.ready,
    // A refresh updates the status; the tab below keeps what the operator
    // opened, and says when a newer drift arrived. The tab's refresh is
    // awaited, so that its failure (an abort when the operator leaves the
    // page) reaches the caller, which handles it.
    refresh: async () => {
      const now = await api(route('servers', name), { signal });
      renderHead(head, now);
      mixedPanel(mixed, now);
      if (shown && shown.refresh) await shown.refresh(now);
    },
  };
}

function tabLink(label, href, selected, n) {
  return h('a', { class: 'tab', href, role: 'tab', 'aria-selected': String(selected) }, label,
    n ? h('span', { class: 'count' }, count(n)) : null);
}

// renderHead shows the server's status and the facts an operator needs
// first (what it serves, the last probe, since when it is down); the rest
// are secondary, which a phone shows on demand.
function renderHead(head, s) {
  const c = s.contract;
  const p = s.probe;
  const more = h('button', { type: 'button', class: 'btn btn-link more-facts', 'aria-expanded': 'false', dataset: { action: 'more-facts' } }, 'More facts');
  more.addEventListener('click', () => {
    const all = head.classList.toggle('all-facts');
    more.setAttribute('aria-expanded', String(all));
    more.textContent = all ? 'Fewer facts' : 'More facts';
  });
  const minor = (label, ...value) => {
    const f = fact(label, ...value);
    f.classList.add('secondary');
    return f;
  };
  replace(head,
    h('div', { class: 'server-title' },
      h('h1', null, s.name), statusChip(s.status),
      s.open_drift ? severityChip(s.open_drift.severity) : null,
      s.mixed ? h('span', { class: 'badge-mixed' }, 'mixed fleet') : null),
    h('div', { class: 'server-url mono' }, s.url),
    h('div', { class: 'facts' },
      p && p.error_class !== 'none' ? down(p) : null,
      fact('Server', c ? c.server_info.name + ' ' + c.server_info.version : '—'),
      fact('Contract', c ? digest(c.digest) : '—', c && c.baseline_digest !== c.digest ? [' (baseline ', digest(c.baseline_digest), ')'] : null),
      fact('Last probe', p ? [ago(p.last), ' · ', p.error_class === 'none' ? millis(p.duration_ms) : h('span', { class: 'err' }, p.error_class.replaceAll('_', ' '))] : 'not probed yet'),
      minor('Protocol', c ? c.protocol_version + ' · ' + c.spec_generation.replaceAll('_', ' ') : '—'),
      minor('Transport', c ? c.transport : '—'),
      minor('Baseline', chip(s.baseline_mode, 'plain')),
      minor('Probes', p ? count(p.count) : '0', h('span', { class: 'faint' }, ' since start')),
      minor('Receiver', h('code', null, s.receiver))),
    more);
}

// down says since when a DOWN server has failed, and why.
function down(p) {
  const f = fact('Down since', p.failing_since ? ago(p.failing_since) : 'unknown',
    h('span', { class: 'err' }, ' · ', p.error_class.replaceAll('_', ' ')),
    h('span', { class: 'faint' }, ' · last success ', p.last_success ? ago(p.last_success) : 'never'));
  f.classList.add('down-since');
  return f;
}
