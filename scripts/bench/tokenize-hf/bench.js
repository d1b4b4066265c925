// Times Hugging Face's Rust tokenizer (npm tokenizers, from
// scripts/golden/node_modules) encoding a text file: one warm-up, then the
// median wall time of several encodes, and of "a"*100000, and the SHA-256
// of the ids. Only the encode call is timed (it includes the N-API
// crossing).
//
// usage: node bench.js TOKENIZER_JSON TEXT_FILE [RUNS [lines]]
//
// With "lines", each line of the file is encoded on its own, one after
// another (as gobench -lines does).
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require(path.join(__dirname, '..', '..', 'golden', 'node_modules', 'tokenizers'));

async function timeIt(tok, docs, runs) {
  const ids = [];
  for (const s of docs) for (const id of (await tok.encode(s, null, { addSpecialTokens: false })).getIds()) ids.push(id);
  const d = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    for (const s of docs) await tok.encode(s, null, { addSpecialTokens: false });
    d.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  d.sort((a, b) => a - b);
  return [ids, d[Math.floor(d.length / 2)]];
}

async function main() {
  const [tokPath, textPath, runsArg, mode] = process.argv.slice(2);
  const runs = Number(runsArg || 7);
  const t0 = process.hrtime.bigint();
  const tok = Tokenizer.fromFile(tokPath);
  const load = Number(process.hrtime.bigint() - t0) / 1e6;
  const s = fs.readFileSync(textPath, 'utf8');
  // Lines as gobench's strings.SplitAfter(s, "\n") makes them.
  const docs = mode === 'lines' ? s.split(/(?<=\n)/) : [s];
  const [ids, med] = await timeIt(tok, docs, runs);
  const [, medA] = await timeIt(tok, ['a'.repeat(100000)], runs);
  // The SHA-256 of the ids in decimal, comma-separated, as gobench writes it.
  const digest = crypto.createHash('sha256').update(Array.from(ids).join(',')).digest('hex');
  console.log(`hf   load=${load.toFixed(0)}ms bytes=${Buffer.byteLength(s)} tokens=${ids.length} ids_sha256=${digest} encode_median=${med.toFixed(1)}ms a100k_median=${medA.toFixed(1)}ms`);
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
