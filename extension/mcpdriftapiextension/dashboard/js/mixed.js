// A mixed fleet (rolling deploy, canary): the contracts the server serves
// alternately, and what each variant changes against the baseline, while
// no drift says it yet (one comes when the fleet converges).

import { chip, count, digest, h, plural, replace, SEVERITIES, severityChip } from './dom.js';
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
    (v.changes || []).map((c) => changeCard(c)));
}

// worstVariant is the worst severity among a mixed fleet's variants; null
// when none is classified (or the server is not mixed).
export function worstVariant(s) {
  const sevs = (s.variants || []).map((v) => v.severity).filter((x) => x);
  return SEVERITIES.find((sev) => sevs.includes(sev)) || null;
}
