// Highlighting what changed between two texts: a longest-common-subsequence
// alignment of their tokens (words of a description, lines of a
// definition), each side marking what the other does not have.

import { h } from './dom.js';

// Past this many cells the alignment is skipped and the texts are shown
// plain: definitions are bounded by the API, but a browser tab should not
// spend seconds on a pathological one.
const MAX_CELLS = 4e6;

// sides aligns a and b (token arrays) and returns, per side, each token
// with whether it is changed; null when too large to align.
export function sides(a, b) {
  let lo = 0;
  while (lo < a.length && lo < b.length && a[lo] === b[lo]) lo++;
  let ea = a.length;
  let eb = b.length;
  while (ea > lo && eb > lo && a[ea - 1] === b[eb - 1]) { ea--; eb--; }
  const A = a.slice(lo, ea);
  const B = b.slice(lo, eb);
  if (A.length * B.length > MAX_CELLS) return null;
  const w = B.length + 1;
  const L = new Uint32Array((A.length + 1) * w); // L[i][j]: LCS of A[i:], B[j:]
  for (let i = A.length - 1; i >= 0; i--) {
    for (let j = B.length - 1; j >= 0; j--) {
      L[i * w + j] = A[i] === B[j] ? L[(i + 1) * w + j + 1] + 1 : Math.max(L[(i + 1) * w + j], L[i * w + j + 1]);
    }
  }
  const same = (t) => ({ token: t, changed: false });
  const before = a.slice(0, lo).map(same);
  const after = b.slice(0, lo).map(same);
  let i = 0;
  let j = 0;
  while (i < A.length || j < B.length) {
    if (i < A.length && j < B.length && A[i] === B[j]) {
      before.push(same(A[i++]));
      after.push(same(B[j++]));
    } else if (j >= B.length || (i < A.length && L[(i + 1) * w + j] >= L[i * w + j + 1])) {
      before.push({ token: A[i++], changed: true });
    } else {
      after.push({ token: B[j++], changed: true });
    }
  }
  return { before: before.concat(a.slice(ea).map(same)), after: after.concat(b.slice(eb).map(same)) };
}

// words splits a text into words and the whitespace between them.
export const words = (s) => s.split(/(\s+)/).filter((t) => t !== '');

// inline renders tokens as text, with runs of changed tokens inside tag
// (del or ins).
export function inline(tokens, tag) {
  const out = [];
  let run = null;
  for (const { token, changed } of tokens) {
    if (changed) {
      if (!run) out.push((run = h(tag)));
      run.append(token);
    } else {
      run = null;
      out.push(token);
    }
  }
  return out;
}

// lines renders tokens as one block per line, changed lines marked cls.
export const lines = (tokens, cls) =>
  tokens.map(({ token, changed }) => h('span', { class: changed ? 'line ' + cls : 'line' }, token));
