// Who called a changed tool recently: the impact query, answered by the
// mcpimpact processor's live index. One panel per changed tool, loaded as
// soon as the drift shows.

import { api, route } from './api.js';
import { ago, chip, count, h, hours, millis, plural, replace, seconds, stacked } from './dom.js';
import { failure } from './notice.js';

// The window the dashboard asks for: a day, or the processor's window when
// it keeps less.
const WANT_HOURS = 24;

// A drift can change many tools: their queries go a few at a time.
const PARALLEL = 4;
let running = 0;
const waiting = [];

async function limited(f) {
  if (running >= PARALLEL) await new Promise((resolve) => waiting.push(resolve));
  running++;
  try {
    return await f();
  } finally {
    running--;
    if (waiting.length) waiting.shift()();
  }
}

// impactPanel returns the panel and a promise that settles once it shows
// an answer (or why there is none).
export function impactPanel(server, tool, { info, signal }) {
  const panel = h('section', { class: 'impact', dataset: { tool, state: 'loading' } });
  const window = Math.min(WANT_HOURS, info.impact.window_hours || WANT_HOURS);
  const title = h('h4', null, 'Agents that called ', h('code', null, tool), ' in the last ' + hours(window));
  replace(panel, h('div', { class: 'impact-head' }, title), h('p', { class: 'note' }, 'Loading callers…'));

  const show = (state, ...content) => {
    panel.dataset.state = state;
    replace(panel, h('div', { class: 'impact-head' }, title, content[0]), ...content.slice(1));
  };
  const load = async () => {
    if (!info.impact.available) {
      show('unavailable', null, h('p', { class: 'note' }, 'Impact is not available: ' + info.impact.message));
      return;
    }
    try {
      const q = '?tool=' + encodeURIComponent(tool) + '&hours=' + window;
      const im = await api(route('servers', server, 'impact') + q, { signal });
      if (im.no_recent_callers || !im.agents.length) {
        show('no-callers', null, h('p', { class: 'no-callers' }, 'No recent callers — tool may be unused'));
        return;
      }
      show('agents', totals(im), agentTable(im));
    } catch (err) {
      if (err.name === 'AbortError') return;
      if (err.status === 401) {
        show('error', null, failure(err, load));
      } else {
        show(err.status === 503 ? 'unavailable' : 'error', null, h('p', { class: err.status === 404 || err.status === 503 ? 'note' : 'note error' }, err.message));
      }
    }
  };
  return { panel, ready: limited(load) };
}

// totals: the red number is the stale count, as many as the spans marked
// mcpdrift.tool.stale=true; calls with the previous definition made before
// the change are counted apart, in grey.
function totals(im) {
  const t = im.totals;
  return h('div', { class: 'impact-totals' },
    h('strong', null, plural(t.agents, 'agent')), ' · ', plural(t.sessions, 'session'), ' · ',
    plural(t.calls, 'call'), ' · ', plural(t.errors, 'error'),
    t.stale ? [' · ', h('span', { class: 'stale', dataset: { stale: t.stale },
      title: 'Calls planned against a definition the server no longer served when they arrived (including calls the gate refused)' },
    plural(t.stale, 'stale call'))] : null,
    t.before ? [' · ', h('span', { class: 'before', title: 'Calls with the previous definition, made while the server still served it' },
      count(t.before) + ' before the change')] : null,
    t.recovery ? h('div', { class: 'recovery-totals' }, 'Sessions since the change: ', recovery(t.recovery, true)) : null);
}

function agentTable(im) {
  const cols = [['Agent'], ['Sessions', 'num'], ['Calls', 'num'], ['Errors', 'num'], ['Avg latency', 'num'], ['Last called'], ['Definition used'], ['Since the change'], ['Risk']];
  return h('div', { class: 'table-wrap' }, stacked(h('table', { class: 'agents' },
    h('thead', null, h('tr', null, cols.map(([c, cls]) => h('th', { class: cls }, c)))),
    h('tbody', null, im.agents.map((a) => h('tr', { class: 'agent-row', dataset: { agent: a.agent ?? '', risk: a.risk } },
      h('td', null, a.agent === null ? h('span', { class: 'unnamed', title: 'The spans named no agent (gen_ai.agent.name)' }, 'unnamed agent') : h('strong', null, a.agent)),
      h('td', { class: 'num', title: a.session_ids.join('\n') }, count(a.sessions)),
      h('td', { class: 'num' }, count(a.calls)),
      h('td', { class: 'num' }, count(a.errors)),
      h('td', { class: 'num' }, millis(a.avg_latency_ms)),
      h('td', { class: 'nowrap' }, ago(a.last_call)),
      h('td', null, split(a.digests)),
      h('td', { class: 'nowrap' }, a.recovery ? recovery(a.recovery, false) : '—'),
      h('td', null, chip(a.risk, 'risk-' + a.risk))))))));
}

// split shows what the calls were planned against: stale, the previous
// definition before the change, the current one, a digest no probe has
// shown yet (ahead), or unknown.
const CLASSES = ['stale', 'before', 'new', 'ahead', 'unknown'];

function split(d) {
  const total = CLASSES.reduce((n, k) => n + d[k], 0) || 1;
  const seg = (k) => (d[k] ? h('span', { class: k, style: { width: (100 * d[k] / total).toFixed(1) + '%' } }) : null);
  const part = (k) => (d[k] || k === 'stale' || k === 'new' ? h('span', { class: d[k] ? k : '' }, count(d[k]) + ' ' + k) : null);
  const parts = CLASSES.map(part).filter((p) => p);
  return h('div', { class: 'split', dataset: Object.fromEntries(CLASSES.map((k) => [k, d[k]])) },
    h('div', { class: 'split-bar', 'aria-hidden': 'true' }, CLASSES.map(seg)),
    h('div', { class: 'split-text' }, parts.flatMap((p, i) => (i ? [' · ', p] : [p]))));
}

// recovery says where the sessions the change affected stand, with the
// median time to recover when asked.
function recovery(r, withTime) {
  const parts = [count(r.recovered) + ' recovered'];
  if (r.still_stale) parts.push(count(r.still_stale) + ' still stale');
  if (r.failed) parts.push(count(r.failed) + ' failed');
  if (r.idle) parts.push(count(r.idle) + ' idle');
  const took = !withTime || r.median_seconds_to_recover === null ? null : ' (in ' + seconds(r.median_seconds_to_recover) + ', median)';
  return h('span', { class: 'recovery', dataset: { recovered: r.recovered, stillStale: r.still_stale, failed: r.failed, idle: r.idle } },
    parts.join(' · '), took);
}

