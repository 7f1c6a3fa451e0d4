// The Drift tab: one drift of the server's history (the newest unless
// another is picked) with summary chips, one card per change with BEFORE /
// AFTER boxes holding only the value that changed, the agents that called
// each changed tool (impact.js), both full definitions side by side on
// demand, and Accept.

import { acceptControls } from './accept.js';
import { api, route } from './api.js';
import { ago, chip, count, digest, h, hash, plural, pretty, replace, seconds, SEVERITIES, severityChip } from './dom.js';
import { inline, lines, sides, words } from './diff.js';
import { impactPanel } from './impact.js';
import { nextStep } from './nextstep.js';
import { bannerAction, empty } from './notice.js';

const HISTORY_LIMIT = 50;

// A big drift stays readable: the first OPEN_GROUPS changed items show
// open, the rest collapsed to their heading; an item shows its first
// OPEN_CARDS changes, the rest behind a button; past FILTER_FROM changes a
// filter by severity and item appears.
const OPEN_GROUPS = 4;
const OPEN_CARDS = 3;
const FILTER_FROM = 10;

const SUBJECTS = { tool: 'Tool', prompt: 'Prompt', resource: 'Resource', resource_template: 'Resource template', server: 'Server' };

export async function driftTab(el, { server, driftId, signal, info, rerender }) {
  const history = (before) => api(route('servers', server.name, 'drifts') + '?limit=' + HISTORY_LIMIT +
    (before ? '&before=' + encodeURIComponent(before) : ''), { signal });
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
  const items = groups(drift).map((g, i) => itemGroup(g, drift, server, { info, signal, readies, open: i < OPEN_GROUPS }));
  const mainCol = h('div', { class: 'drift-main' },
    driftHead(drift, server, rerender),
    drift.changes.length > FILTER_FROM ? filterBar(items) : null,
    items.map((it) => it.node));
  replace(el, h('div', { class: 'drift-layout' }, mainCol, aside));
  // Older pages the operator loaded stay through refreshes.
  const older = [];
  const more = async (next) => {
    const p = await history(next);
    older.push(...p.drifts);
    show(shownPage, p.next);
  };
  let shownPage = page;
  const show = (p, next) => renderHistory(aside, p, older, next, server.name, drift.id, more);
  show(page, page.next);

  const newest = page.drifts[0].id;
  return {
    ready: Promise.all(readies),
    refresh: async () => {
      const now = await history();
      shownPage = now;
      // The cursor past what is shown: the first page's, or the last
      // older page's (kept in the list's button).
      show(now, older.length ? aside.dataset.next : now.next);
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
    nextStep(d),
    h('p', { class: 'drift-desc' }, d.description),
    summaryChips(d.summary),
    h('div', { class: 'drift-meta' },
      h('span', null, 'Detected ', ago(d.at)),
      servedBefore(d),
      h('span', null, 'Contract ', digest(d.previous_contract), ' → ', digest(d.current_contract)),
      h('span', null, plural(d.changes.length, 'change'))),
    d.accepted ? h('div', { class: 'accepted-note', dataset: { acceptedBy: d.accepted.by } },
      'Accepted by ', h('strong', null, d.accepted.by), d.accepted.authenticated ? ' (authenticated)' : ' (as stated; not authenticated)',
      ' ', ago(d.accepted.at), d.accepted.comment ? [' — ', d.accepted.comment] : null) : null,
    d.truncated ? h('div', { class: 'truncated-note' },
      'Some values or definitions were left out to keep this history entry within its byte budget.') : null,
    accept && accept.panel);
}

// servedBefore: how long before the probes confirmed the drift a probe
// first saw the new contract (changed_at; history entries older than it
// carry at, and show nothing).
function servedBefore(d) {
  const lag = (Date.parse(d.at) - Date.parse(d.changed_at)) / 1000;
  if (!(lag > 0)) return null;
  return h('span', { class: 'served-before', title: 'First served ' + new Date(d.changed_at).toLocaleString() },
    'first served ', seconds(lag), ' before');
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

// itemGroup is one changed item: its change cards (the first OPEN_CARDS,
// the rest behind a button), the callers of a changed tool, and the full
// definitions; collapsed to its heading unless open. It returns the node
// and how the filter bar shows it.
function itemGroup(g, drift, server, { info, signal, readies, open }) {
  const def = (drift.definitions || []).find((x) => x.subject === g.subject && x.name === g.name);
  const cards = g.changes.map((c) => changeCard(c, def));
  const body = h('div', { class: 'panel item-body', hidden: !open }, cards);
  const hiddenCards = cards.slice(OPEN_CARDS);
  let moreButton = null;
  if (hiddenCards.length) {
    hiddenCards.forEach((c) => { c.hidden = true; });
    moreButton = h('button', { type: 'button', class: 'btn btn-link more-cards', dataset: { action: 'more-changes' } },
      'Show ' + plural(hiddenCards.length, 'more change'));
    moreButton.addEventListener('click', () => { hiddenCards.forEach((c) => { c.hidden = false; }); moreButton.remove(); moreButton = null; });
    body.append(h('div', { class: 'more-bar' }, moreButton));
  }
  if (g.subject === 'tool') {
    const { panel, ready } = impactPanel(server.name, g.name, { info, signal });
    readies.push(ready);
    body.append(panel);
  }
  body.append(compareBar(def));
  const toggle = h('button', { type: 'button', class: 'btn btn-link group-toggle', 'aria-expanded': String(open), dataset: { action: 'toggle-group' } },
    open ? 'Hide' : 'Show');
  const setOpen = (o) => {
    body.hidden = !o;
    node.dataset.collapsed = String(!o);
    toggle.setAttribute('aria-expanded', String(o));
    toggle.textContent = o ? 'Hide' : 'Show';
  };
  toggle.addEventListener('click', () => setOpen(body.hidden));
  const node = h('section', { class: 'item-group', dataset: { subject: g.subject, name: g.name, collapsed: String(!open) } },
    h('div', { class: 'item-head' },
      h('span', { class: 'kind' }, SUBJECTS[g.subject] || g.subject),
      h('span', { class: 'name' }, g.name || 'server-level'),
      severityChip(g.changes[0].severity),
      h('span', { class: 'faint' }, plural(g.changes.length, 'change')),
      toggle),
    body);
  // filter shows the item's changes of the severities asked, all of them
  // (a filter that hid matches behind "more" would mislead), or, with no
  // filter, the item as it was laid out.
  // only: null (every item), or whether this is the item picked.
  const filter = (sevs, only) => {
    const laidOut = !sevs && only === null;
    let shown = 0;
    cards.forEach((c, i) => {
      const match = only !== false && (!sevs || sevs.has(c.dataset.severity));
      c.hidden = !match || (laidOut && moreButton !== null && i >= OPEN_CARDS);
      if (match) shown++;
    });
    node.hidden = shown === 0;
    if (!laidOut) setOpen(true);
  };
  return { node, group: g, filter };
}

// filterBar narrows a big drift to some severities and one item.
function filterBar(items) {
  const present = SEVERITIES.filter((s) => items.some((it) => it.group.changes.some((c) => c.severity === s)));
  const picked = new Set();
  const select = h('select', { name: 'item', 'aria-label': 'Changed item', dataset: { filter: 'item' } },
    h('option', { value: '' }, 'All ' + plural(items.length, 'changed item')),
    items.map((it, i) => h('option', { value: String(i) },
      (SUBJECTS[it.group.subject] || it.group.subject) + ' ' + (it.group.name || 'server-level') + ' (' + it.group.changes.length + ')')));
  const count = h('span', { class: 'faint filter-count', 'aria-live': 'polite' });
  const apply = () => {
    const sevs = picked.size ? picked : null;
    items.forEach((it, i) => it.filter(sevs, select.value === '' ? null : String(i) === select.value));
    const shown = document.querySelectorAll('.item-group:not([hidden]) .change-card:not([hidden])').length;
    count.textContent = sevs || select.value ? shown + ' shown' : '';
  };
  select.addEventListener('change', apply);
  const buttons = present.map((sev) => {
    const b = h('button', { type: 'button', class: 'chip sev-' + sev + ' filter-chip', 'aria-pressed': 'false', dataset: { filterSeverity: sev } }, sev);
    b.addEventListener('click', () => {
      if (picked.has(sev)) picked.delete(sev); else picked.add(sev);
      b.setAttribute('aria-pressed', String(picked.has(sev)));
      apply();
    });
    return b;
  });
  return h('div', { class: 'panel filter-bar', role: 'search', 'aria-label': 'Filter changes' },
    h('span', { class: 'next-label' }, 'Filter'), buttons, select, count);
}

// changeCard: a change of a whole item (path "": added, removed) names
// the item; its boxes show the definition itself when the entry kept it
// (def; a mixed fleet's variant has none).
export function changeCard(c, def) {
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

// renderHistory lists the first page and the older pages loaded, with a
// button for the next older page while there is one (next: its cursor).
function renderHistory(aside, page, older, next, server, current, more) {
  const seen = new Set(page.drifts.map((d) => d.id));
  const all = [...page.drifts, ...older.filter((d) => !seen.has(d.id))];
  aside.dataset.next = next || '';
  const button = next ? h('button', { type: 'button', class: 'btn older', dataset: { action: 'older' } },
    'Show older (' + count(page.total - all.length) + ' more)') : null;
  if (button) {
    button.addEventListener('click', async () => {
      button.disabled = true;
      try {
        await more(next);
      } catch (err) {
        if (err.name === 'AbortError') return;
        button.disabled = false;
        button.after(h('p', { class: 'note error' }, err.message));
      }
    });
  }
  replace(aside,
    h('h3', null, 'History ', h('span', { class: 'faint' }, count(all.length) + ' of ' + count(page.total))),
    h('ol', null, all.map((d) => h('li', null,
      h('a', { href: hash('servers', server, 'drift', d.id), 'aria-current': String(d.id === current), dataset: { drift: d.id } },
        h('span', { class: 'line1' }, severityChip(d.severity), h('span', { class: 'state ' + d.state }, d.state)),
        h('span', { class: 'faint' }, ago(d.at), ' · ', plural(d.changes.length, 'change')))))),
    button ? h('div', { class: 'older-bar' }, button) : null);
}
