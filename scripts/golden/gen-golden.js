// Encodes every corpus string with Hugging Face's Rust tokenizers (the
// npm binding, pinned in package.json) and writes one JSON object per
// line: {"text": ..., "ids": [...], "decoded": ...}. "decoded" is
// decode(ids, skipSpecialTokens=false).
//
// usage: node gen-golden.js TOKENIZER_JSON CORPUS_JSONL OUT_JSONL
'use strict';
const fs = require('fs');
const { Tokenizer } = require('tokenizers');

async function main() {
  const [tokPath, corpusPath, outPath] = process.argv.slice(2);
  if (!outPath) {
    console.error('usage: node gen-golden.js TOKENIZER_JSON CORPUS_JSONL OUT_JSONL');
    process.exit(2);
  }
  const tok = Tokenizer.fromFile(tokPath);
  const texts = fs.readFileSync(corpusPath, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
  const lines = [];
  for (const text of texts) {
    const enc = await tok.encode(text, null, { addSpecialTokens: false });
    const ids = Array.from(enc.getIds());
    const decoded = await tok.decode(ids, false);
    lines.push(JSON.stringify({ text, ids, decoded }));
  }
  fs.writeFileSync(outPath, lines.join('\n') + '\n');
  console.error(`${outPath}: ${lines.length} strings`);
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
