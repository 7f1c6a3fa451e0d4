// Who called a changed tool recently: the impact query, answered by the
// mcpimpact processor's live index. One panel per changed tool, loaded as
// soon as the drift shows.

import { api, route } from './api.js';
import { ago, chip, count, h, hours, millis, plural, replace } from './dom.js';
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

function totals(im) {
  const old = im.agents.reduce((n, a) => n + a.digests.old, 0);
  return h('div', { class: 'impact-totals' },
    h('strong', null, plural(im.totals.agents, 'agent')), ' · ', plural(im.totals.sessions, 'session'), ' · ',
    plural(im.totals.calls, 'call'), ' · ', plural(im.totals.errors, 'error'),
    old ? [' · ', h('span', { class: 'stale', title: 'Calls planned on the definition before the change: after the change, they are stale' },
      plural(old, 'call') + ' with the old definition')] : null);
}

function agentTable(im) {
  const cols = [['Agent'], ['Sessions', 'num'], ['Calls', 'num'], ['Errors', 'num'], ['Avg latency', 'num'], ['Last called'], ['Definition used'], ['Risk']];
  return h('div', { class: 'table-wrap' }, h('table', { class: 'agents' },
    h('thead', null, h('tr', null, cols.map(([c, cls]) => h('th', { class: cls }, c)))),
    h('tbody', null, im.agents.map((a) => h('tr', { class: 'agent-row', dataset: { agent: a.agent ?? '', risk: a.risk } },
      h('td', null, a.agent === null ? h('span', { class: 'unnamed', title: 'The spans named no agent (gen_ai.agent.name)' }, 'unnamed agent') : h('strong', null, a.agent)),
      h('td', { class: 'num', title: a.session_ids.join('\n') }, count(a.sessions)),
      h('td', { class: 'num' }, count(a.calls)),
      h('td', { class: 'num' }, count(a.errors)),
      h('td', { class: 'num' }, millis(a.avg_latency_ms)),
      h('td', { class: 'nowrap' }, ago(a.last_call)),
      h('td', null, split(a.digests)),
      h('td', null, chip(a.risk, 'risk-' + a.risk)))))));
}

// split shows which definition the calls were planned on: the tool's
// previous digest (old), its current one (new), or unknown.
function split(d) {
  const total = d.old + d.new + d.unknown || 1;
  const seg = (k) => (d[k] ? h('span', { class: k, style: { width: (100 * d[k] / total).toFixed(1) + '%' } }) : null);
  return h('div', { class: 'split', dataset: { old: d.old, new: d.new, unknown: d.unknown } },
    h('div', { class: 'split-bar', 'aria-hidden': 'true' }, seg('old'), seg('new'), seg('unknown')),
    h('div', { class: 'split-text' },
      h('span', { class: d.old ? 'old' : '' }, count(d.old) + ' old'), ' · ' + count(d.new) + ' new',
      d.unknown ? ' · ' + count(d.unknown) + ' unknown' : null));
}
