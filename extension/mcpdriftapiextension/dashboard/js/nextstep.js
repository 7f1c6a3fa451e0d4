// What to do about an open drift, at the top of the Drift tab so that it
// is on the first screen of a phone: the API's next step (roll back to the
// previous contract, restart or update the agents it hurts, or accept),
// the worst change, and the agents it hurts.

import { chip, count, digest, h, plural, severityChip } from './dom.js';

const ACTIONS = {
  rollback: ['Roll back', 'sev-breaking'],
  update_agents: ['Update agents', 'sev-warning'],
  accept: ['Accept', 'sev-compatible'],
  review: ['Review', 'plain'],
};

const SUBJECTS = { tool: 'tool', prompt: 'prompt', resource: 'resource', resource_template: 'resource template', server: 'server' };

// nextStep returns the panel, or null when the drift is closed (the API
// gives no step then).
export function nextStep(d) {
  const s = d.next_step;
  if (!s) return null;
  const [label, kind] = ACTIONS[s.action] || [s.action, 'plain'];
  const worst = d.changes[0];
  return h('section', { class: 'next-step', dataset: { action: s.action }, 'aria-label': 'Next step' },
    h('div', { class: 'next-top' },
      h('span', { class: 'next-label' }, 'Next step'),
      chip(label, kind, { dataset: { step: s.action } })),
    h('p', { class: 'next-summary' }, s.summary),
    s.rollback ? h('p', { class: 'next-rollback' }, 'Previous contract ', digest(s.rollback.contract),
      s.rollback.server_version !== null ? [' · version ', h('strong', null, s.rollback.server_version)] : null) : null,
    worst ? h('p', { class: 'worst' }, h('span', { class: 'next-label' }, 'Worst change'), ' ', severityChip(worst.severity), ' ',
      worst.name ? [SUBJECTS[worst.subject] || worst.subject, ' ', h('code', null, worst.name), ': '] : null, worst.message) : null,
    agents(s));
}

function agents(s) {
  if (!s.impact_known) return h('p', { class: 'agents-hurt faint' }, 'Affected agents: not known.');
  if (!s.agents.length) return h('p', { class: 'agents-hurt', dataset: { count: 0 } }, 'Affected agents: none.');
  return h('div', { class: 'agents-hurt', dataset: { count: s.agents.length } },
    h('span', { class: 'next-label' }, 'Affected agents'),
    h('ul', null, s.agents.map((a) => h('li', { dataset: { agent: a.agent ?? '' } },
      chip(a.risk, 'risk-' + a.risk), ' ',
      a.agent === null ? h('span', { class: 'unnamed' }, 'unnamed agent') : h('strong', null, a.agent), ' ',
      h('span', { class: 'faint' }, [
        a.still_stale ? plural(a.still_stale, 'session') + ' still stale' : null,
        a.failed ? plural(a.failed, 'session') + ' failed' : null,
        a.stale ? count(a.stale) + ' stale calls' : null,
      ].filter((x) => x).join(' · ')),
      a.sessions.length ? h('span', { class: 'sessions mono', title: a.sessions.join('\n') }, ' ', a.sessions.slice(0, 3).join(', '), a.sessions.length > 3 ? ', …' : '') : null))));
}
