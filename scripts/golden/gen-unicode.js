// Writes what Hugging Face's Rust tokenizers (the npm binding, pinned in
// package.json) do with every Unicode code point, so that the Go tests can
// compare lib/tokenizer's Unicode tables against it over the whole code
// space: which code points each regular-expression class of a Split pattern
// matches (Oniguruma), what each normalizer makes of each code point alone,
// what Lowercase makes of it, and which code points the Digits
// pre-tokenizer takes as digits. One JSON object per line:
//
//   {"kind":"class","pattern":P,"ranges":[[lo,hi],...]}
//   {"kind":"normalizer","type":T,"changed":[[cp,[cp,...]],...]}
//   {"kind":"digits","ranges":[[lo,hi],...]}
//
// usage: node gen-unicode.js OUT_JSONL
'use strict';
const fs = require('fs');
const { Tokenizer } = require('tokenizers');

const [outPath] = process.argv.slice(2);
if (!outPath) {
  console.error('usage: node gen-unicode.js OUT_JSONL');
  process.exit(2);
}

const all = [];
for (let c = 0; c < 0x110000; c++) if (c < 0xd800 || c > 0xdfff) all.push(c);

function tokenizer(normalizer, preTokenizer) {
  return Tokenizer.fromString(JSON.stringify({
    version: '1.0', added_tokens: [], normalizer, pre_tokenizer: preTokenizer, post_processor: null, decoder: null,
    model: { type: 'BPE', vocab: { a: 0 }, merges: [] },
  }));
}

function toRanges(cps) {
  const r = [];
  for (const c of cps) {
    if (r.length && r[r.length - 1][1] === c - 1) r[r.length - 1][1] = c;
    else r.push([c, c]);
  }
  return r;
}

// A Split with Removed and invert keeps exactly the matches of (?:P)+, runs
// of code points in class P; the offsets are in code points.
const allText = all.map((c) => String.fromCodePoint(c)).join('');
function classRanges(pattern) {
  const split = { type: 'Split', pattern: { Regex: `(?:${pattern})+` }, behavior: 'Removed', invert: true };
  const pt = tokenizer(null, split).getPreTokenizer();
  const out = [];
  for (const [, [lo, hi]] of pt.preTokenizeString(allText)) for (let i = lo; i < hi; i++) out.push(all[i]);
  return toRanges(out);
}

// Code points one at a time, separated by U+0001 (which no normalizer
// changes and nothing composes with); U+0001 itself is left out.
function normalized(type) {
  const n = tokenizer({ type }, null).getNormalizer();
  const changed = [];
  for (let base = 0; base < all.length; base += 4096) {
    const cps = all.slice(base, base + 4096).filter((c) => c !== 1);
    const parts = n.normalizeString(cps.map((c) => String.fromCodePoint(c)).join('\u0001')).split('\u0001');
    if (parts.length !== cps.length) throw new Error(`${type}: separator lost near U+${cps[0].toString(16)}`);
    cps.forEach((c, i) => {
      if (parts[i] !== String.fromCodePoint(c)) changed.push([c, Array.from(parts[i]).map((s) => s.codePointAt(0))]);
    });
  }
  return changed;
}

// Digits with individual_digits=false makes each digit between two "a"s a
// piece of its own; other code points stay in the "a" pieces.
function digitRanges() {
  const pt = tokenizer(null, { type: 'Digits', individual_digits: false }).getPreTokenizer();
  const text = 'a' + all.map((c) => String.fromCodePoint(c)).join('a') + 'a';
  const out = [];
  for (const [s] of pt.preTokenizeString(text)) {
    const cs = Array.from(s);
    if (!cs.includes('a')) for (const ch of cs) out.push(ch.codePointAt(0));
  }
  return toRanges(out);
}

const classes = [
  '\\p{L}', '\\p{Lu}', '\\p{Ll}', '\\p{Lt}', '\\p{Lm}', '\\p{Lo}', '\\p{M}', '\\p{Mn}', '\\p{Mc}', '\\p{Me}',
  '\\p{N}', '\\p{Nd}', '\\p{Nl}', '\\p{No}', '\\p{P}', '\\p{Pc}', '\\p{Pd}', '\\p{Ps}', '\\p{Pe}', '\\p{Pi}', '\\p{Pf}', '\\p{Po}',
  '\\p{S}', '\\p{Sm}', '\\p{Sc}', '\\p{Sk}', '\\p{So}', '\\p{Z}', '\\p{Zs}', '\\p{Zl}', '\\p{Zp}',
  '\\p{C}', '\\p{Cc}', '\\p{Cf}', '\\p{Co}', '\\p{Cn}',
  '\\s', '\\S', '\\w', '\\W', '\\d', '\\D', '\\h', '\\H', '.',
  '[[:alpha:]]', '[[:digit:]]', '[[:alnum:]]', '[[:upper:]]', '[[:lower:]]', '[[:space:]]', '[[:punct:]]',
  '[[:word:]]', '[[:xdigit:]]', '[[:cntrl:]]', '[[:blank:]]', '[[:graph:]]', '[[:print:]]',
  '\\p{Han}', '\\p{Hiragana}', '\\p{Katakana}', '\\p{Hangul}', '\\p{Latin}', '\\p{Cyrillic}', '\\p{Greek}',
  '\\p{Arabic}', '\\p{Hebrew}', '\\p{Devanagari}', '\\p{Bengali}', '\\p{Thai}', '\\p{Common}', '\\p{Inherited}',
  '\\p{Alphabetic}', '\\p{White_Space}', '\\p{Uppercase}', '\\p{Lowercase}',
  '[^\\s\\p{L}\\p{N}]', '[\\p{L}\\p{M}]', '[\\p{P}\\p{S}]', '[^\\r\\n\\p{L}\\p{P}\\p{S}]',
  '[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]', '[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]', '[^\\P{L}]', '[\\w&&[^\\p{Han}]]',
  '[\\w]', '[\\W]', '[^\\w]', '[\\d]', '[\\D]', '[\\s]', '[\\S]', '[\\h]', '[^\\s\\w]', '\\p{^L}', '\\P{N}',
  '[\\u4e00-\\u9fa5\\u3040-\\u309f\\u30a0-\\u30ff]', '[!-/:-@\\[-`{-~]', '\\x{1F600}', '[\\x{1F300}-\\x{1F5FF}]',
];

const lines = [];
for (const pattern of classes) lines.push(JSON.stringify({ kind: 'class', pattern, ranges: classRanges(pattern) }));
for (const type of ['NFC', 'NFD', 'NFKC', 'NFKD', 'Lowercase']) lines.push(JSON.stringify({ kind: 'normalizer', type, changed: normalized(type) }));
lines.push(JSON.stringify({ kind: 'digits', ranges: digitRanges() }));
fs.writeFileSync(outPath, lines.join('\n') + '\n');
console.error(`${outPath}: ${lines.length} lines`);
