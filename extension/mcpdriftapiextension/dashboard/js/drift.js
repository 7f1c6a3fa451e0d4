// The Drift tab: one drift of the server's history (the newest unless
// another is picked) with summary chips, one card per change with BEFORE /
// AFTER boxes holding only the value that changed, the agents that called
// each changed tool (impact.js), both full definitions side by side on
// demand, and Accept.

import { acceptControls } from './accept.js';
import { api, route } from './api.js';
import { ago, chip, digest, h, hash, plural, pretty, replace, SEVERITIES, severityChip } from './dom.js';
import { inline, lines, sides, words } from './diff.js';
import { impactPanel } from './impact.js';
import { bannerAction, empty } from './notice.js';

const HISTORY_LIMIT = 50;

const SUBJECTS = { tool: 'Tool', prompt: 'Prompt', resource: 'Resource', resource_template: 'Resource template', server: 'Server' };

export async function driftTab(el, { server, driftId, signal, info, rerender }) {
  const history = () => api(route('servers', server.name, 'drifts') + '?limit=' + HISTORY_LIMIT, { signal });
  const page = await history();
  if (!page.drifts.length) {
    replace(el, empty('No drift recorded',
      'Every probe is compared with the baseline; when the contract changes, the change shows here with the agents it affects.'));
    return null;
  }
  const id = driftId || page.drifts[0].id;
  const drift = await api(route('drifts', id), { signal });
  const aside = h('aside', { class: 'panel history', 'aria-label': 'Drift history' });
  const readies = [];
  const mainCol = h('div', { class: 'drift-main' },
    driftHead(drift, server, rerender),
    groups(drift).map((g) => itemGroup(g, drift, server, { info, signal, readies })));
  replace(el, h('div', { class: 'drift-layout' }, mainCol, aside));
  renderHistory(aside, page, server.name, drift.id);

  const newest = page.drifts[0].id;
  return {
    ready: Promise.all(readies),
    refresh: async () => {
      const now = await history();
      renderHistory(aside, now, server.name, drift.id);
      const mine = now.drifts.find((d) => d.id === drift.id);
      if (now.drifts.length && now.drifts[0].id !== newest && !driftId) {
        bannerAction('info', 'A newer drift was recorded.', 'Show it', rerender);
      } else if (mine && mine.state !== drift.state) {
        bannerAction('info', 'This drift is now ' + mine.state + '.', 'Reload', rerender);
      }
    },
  };
}

function driftHead(d, server, rerender) {
  const accept = acceptControls(d, server, rerender);
  return h('section', { class: 'panel drift-head', dataset: { drift: d.id, state: d.state } },
    h('div', { class: 'drift-head-top' },
      h('div', { class: 'drift-title' },
        severityChip(d.severity, { class: 'lg' }),
        h('h2', null, 'Drift ', h('code', null, d.id)),
        chip(d.state, d.state === 'open' ? 'sev-warning' : 'plain', { dataset: { state: d.state } })),
      accept && accept.button),
    h('p', { class: 'drift-desc' }, d.description),
    summaryChips(d.summary),
    h('div', { class: 'drift-meta' },
      h('span', null, 'Detected ', ago(d.at)),
      h('span', null, 'Contract ', digest(d.previous_contract), ' → ', digest(d.current_contract)),
      h('span', null, plural(d.changes.length, 'change'))),
    d.accepted ? h('div', { class: 'accepted-note', dataset: { acceptedBy: d.accepted.by } },
      'Accepted by ', h('strong', null, d.accepted.by), d.accepted.authenticated ? ' (authenticated)' : ' (as stated; not authenticated)',
      ' ', ago(d.accepted.at), d.accepted.comment ? [' — ', d.accepted.comment] : null) : null,
    d.truncated ? h('div', { class: 'truncated-note' },
      'Some values or definitions were left out to keep this history entry within its byte budget.') : null,
    accept && accept.panel);
}

// summaryChips: "N breaking · N warning · N compatible"; a severity with
// no change is not shown.
function summaryChips(summary) {
  const parts = [];
  for (const sev of SEVERITIES) {
    const n = summary[sev];
    if (!n) continue;
    if (parts.length) parts.push(h('span', { class: 'dot-sep', 'aria-hidden': 'true' }, '·'));
    parts.push(chip(n + ' ' + sev, 'sev-' + sev, { dataset: { severity: sev, count: n } }));
  }
  return h('div', { class: 'chips summary-chips', 'aria-label': 'Changes by severity' }, parts);
}

// groups collects the changes per changed item, in the order of its worst
// change (the API lists changes worst first).
function groups(d) {
  const byKey = new Map();
  for (const c of d.changes) {
    const key = c.subject + '\u0000' + c.name;
    if (!byKey.has(key)) byKey.set(key, { subject: c.subject, name: c.name, changes: [] });
    byKey.get(key).changes.push(c);
  }
  return [...byKey.values()];
}

function itemGroup(g, drift, server, { info, signal, readies }) {
  const def = (drift.definitions || []).find((x) => x.subject === g.subject && x.name === g.name);
  const body = h('div', { class: 'panel item-body' }, g.changes.map((c) => changeCard(c, def)));
  if (g.subject === 'tool') {
    const { panel, ready } = impactPanel(server.name, g.name, { info, signal });
    readies.push(ready);
    body.append(panel);
  }
  body.append(compareBar(def));
  return h('section', { class: 'item-group', dataset: { subject: g.subject, name: g.name } },
    h('div', { class: 'item-head' },
      h('span', { class: 'kind' }, SUBJECTS[g.subject] || g.subject),
      h('span', { class: 'name' }, g.name || 'server-level'),
      severityChip(g.changes[0].severity),
      h('span', { class: 'faint' }, plural(g.changes.length, 'change'))),
    body);
}

// changeCard: a change of a whole item (path "": added, removed) names
// the item; its boxes show the definition itself when the entry kept it.
function changeCard(c, def) {
  const whole = c.path === '' && def && !def.truncated;
  const pair = whole ? valuePair(def.before, def.after) : valuePair(c.before, c.after);
  return h('article', { class: 'change-card sev-' + c.severity, dataset: { severity: c.severity, rule: c.rule } },
    h('div', { class: 'change-top' },
      severityChip(c.severity),
      h('code', { title: 'rule' }, c.rule),
      c.path ? h('code', { title: 'JSON pointer into the definition' }, c.path) : null),
    h('p', { class: 'change-msg' }, c.message),
    h('div', { class: 'boxes' },
      box('BEFORE', 'box-before', pair.before),
      h('div', { class: 'arrow', 'aria-hidden': 'true' }, '→'),
      box('AFTER', 'box-after', pair.after)));
}

function box(label, cls, content) {
  return h('div', { class: 'box ' + cls }, h('div', { class: 'box-label' }, label), content);
}

// valuePair renders a change's two values: strings as text with the words
// that differ marked, other JSON indented with the lines that differ
// marked, an absent side as such.
function valuePair(before, after) {
  const absent = () => h('pre', { class: 'box-value absent' }, 'not present');
  if (before === null || after === null) {
    return {
      before: before === null ? absent() : value(before),
      after: after === null ? absent() : value(after),
    };
  }
  const text = typeof before === 'string' && typeof after === 'string';
  const split = text ? words : (v) => pretty(v).split('\n');
  const s = sides(split(before), split(after));
  if (!s) return { before: value(before), after: value(after) };
  const render = text ? inline : lines;
  return {
    before: h('pre', { class: text ? 'box-value text' : 'box-value' }, render(s.before, 'del')),
    after: h('pre', { class: text ? 'box-value text' : 'box-value' }, render(s.after, 'ins')),
  };
}

const value = (v) => (typeof v === 'string'
  ? h('pre', { class: 'box-value text' }, v)
  : h('pre', { class: 'box-value' }, pretty(v)));

// compareBar is the toggle that shows both full definitions of an item
// side by side, the lines that differ marked.
function compareBar(def) {
  if (!def) return h('div', { class: 'compare-bar faint' }, 'Full definitions are not in this history entry.');
  if (def.truncated) return h('div', { class: 'compare-bar faint' }, 'Full definitions were left out to keep this history entry within its byte budget.');
  const area = h('div', { class: 'compare', hidden: true, dataset: { compare: def.name } });
  const button = h('button', { type: 'button', class: 'btn', 'aria-expanded': 'false', dataset: { action: 'compare' } }, 'Compare full definitions');
  button.addEventListener('click', () => {
    const open = area.hidden;
    if (open && !area.childElementCount) fillCompare(area, def);
    area.hidden = !open;
    button.setAttribute('aria-expanded', String(open));
    button.textContent = open ? 'Hide full definitions' : 'Compare full definitions';
  });
  const bar = h('div', { class: 'compare-bar' }, button);
  return h('div', null, bar, area);
}

function fillCompare(area, def) {
  const a = def.before === null ? [] : pretty(def.before).split('\n');
  const b = def.after === null ? [] : pretty(def.after).split('\n');
  const s = sides(a, b) || { before: a.map((token) => ({ token })), after: b.map((token) => ({ token })) };
  const pane = (label, cls, d, tokens, mark, missing) => h('div', { class: 'box ' + cls },
    h('div', { class: 'box-label' }, label, d ? h('span', { class: 'digest', title: d }, d.slice(0, 12)) : null),
    tokens.length ? h('pre', { class: 'box-value' }, lines(tokens, mark)) : h('pre', { class: 'box-value absent' }, missing));
  replace(area,
    pane('BEFORE', 'box-before', def.before_digest, s.before, 'del', 'did not exist'),
    pane('AFTER', 'box-after', def.after_digest, s.after, 'ins', 'removed'));
}

function renderHistory(aside, page, server, current) {
  replace(aside,
    h('h3', null, 'History'),
    h('ol', null, page.drifts.map((d) => h('li', null,
      h('a', { href: hash('servers', server, 'drift', d.id), 'aria-current': String(d.id === current), dataset: { drift: d.id } },
        h('span', { class: 'line1' }, severityChip(d.severity), h('span', { class: 'state ' + d.state }, d.state)),
        h('span', { class: 'faint' }, ago(d.at), ' · ', plural(d.changes.length, 'change')))))),
    page.total > page.drifts.length ? h('p', { class: 'faint', style: { padding: '4px 14px' } }, (page.total - page.drifts.length) + ' older not shown') : null);
}
