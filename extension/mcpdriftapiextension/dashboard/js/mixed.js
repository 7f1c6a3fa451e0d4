// A mixed fleet (rolling deploy, canary): the contracts the server serves
// alternately, and what each variant changes against the baseline, while
// no drift says it yet (one comes when the fleet converges).

import { chip, count, digest, h, hours, plural, replace, SEVERITIES, severityChip, stacked } from './dom.js';
import { changeCard } from './drift.js';

// mixedPanel shows the server's variants in el, most seen first, or hides
// el when the server is not mixed.
export function mixedPanel(el, s) {
  const vs = s.variants || [];
  el.hidden = vs.length === 0;
  if (el.hidden) {
    replace(el);
    return;
  }
  replace(el,
    h('div', { class: 'mixed-head' },
      h('h2', null, 'MIXED'),
      h('span', { class: 'faint' }, plural(vs.length, 'contract') + ' served alternately; each variant is classified against the baseline as its drift would be')),
    vs.map(variant));
}

function variant(v) {
  return h('section', { class: 'variant', dataset: { digest: v.digest, baseline: String(v.baseline), severity: v.severity || '' } },
    h('div', { class: 'variant-head' },
      digest(v.digest),
      h('strong', { class: 'share', title: count(v.count) + ' observations since the fleet started to disagree' }, (100 * v.share).toFixed(1) + ' %'),
      v.baseline ? chip('baseline', 'plain') : v.severity ? severityChip(v.severity) : null),
    v.baseline ? null : h('p', { class: 'variant-summary' }, v.summary || 'Not classified: the receiver no longer keeps this contract.'),
    v.impact ? variantImpact(v.impact) : null,
    (v.changes || []).map((c) => changeCard(c)));
}

const STATUS = {
  hurt_now: ['served the variant', 'The variant served these sessions: its change meets their calls now'],
  at_risk_on_convergence: ['at risk on convergence', 'The baseline served these sessions: the change meets their calls once the fleet converges on the variant'],
};

// variantImpact lists who the variant affects (from the mcpimpact
// processor): per changed tool, the agents whose sessions it served, hurt
// now, then those the baseline served, at risk once the fleet converges.
function variantImpact(imp) {
  const side = (label, t, cls) => h('span', { class: cls }, h('strong', null, label), ' ',
    plural(t.agents, 'agent'), ' · ', plural(t.sessions, 'session'), ' · ', plural(t.calls, 'call'));
  const rows = imp.tools.flatMap((t) => t.agents.map((a) => h('tr', { class: 'agent-row', dataset: { tool: t.tool, agent: a.agent ?? '', status: a.status, risk: a.risk } },
    h('td', null, t.tool),
    h('td', null, a.agent === null ? h('span', { class: 'unnamed', title: 'The spans named no agent (gen_ai.agent.name)' }, 'unnamed agent') : h('strong', null, a.agent)),
    h('td', { title: STATUS[a.status]?.[1] ?? '' }, STATUS[a.status]?.[0] ?? a.status),
    h('td', { class: 'sessions' }, a.session_ids.join(', ') || count(a.sessions)),
    h('td', { class: 'num' }, count(a.calls)),
    h('td', null, chip(a.risk, 'risk-' + a.risk)))));
  const cols = [['Tool'], ['Agent'], ['Sessions were'], ['Sessions'], ['Calls', 'num'], ['Risk']];
  return h('div', { class: 'variant-impact' },
    h('p', { class: 'variant-totals' }, side('Hurt now:', imp.hurt_now, 'hurt-now'), ' — ',
      side('at risk on convergence:', imp.at_risk_on_convergence, 'at-risk'), h('span', { class: 'faint' }, ' (last ' + hours(imp.hours) + ')')),
    rows.length === 0 ? null : h('div', { class: 'table-wrap' }, stacked(h('table', { class: 'agents' },
      h('thead', null, h('tr', null, cols.map(([c, cls]) => h('th', { class: cls }, c)))),
      h('tbody', null, rows)))));
}

// worstVariant is the worst severity among a mixed fleet's variants; null
// when none is classified (or the server is not mixed).
export function worstVariant(s) {
  const sevs = (s.variants || []).map((v) => v.severity).filter((x) => x);
  return SEVERITIES.find((sev) => sevs.includes(sev)) || null;
}
