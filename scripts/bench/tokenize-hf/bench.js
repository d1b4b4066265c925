// Times Hugging Face's Rust tokenizer (npm tokenizers, from
// scripts/golden/node_modules) encoding a text file: one warm-up, then the
// median wall time of several encodes, and of "a"*100000. Only the encode
// call is timed (it includes the N-API crossing).
//
// usage: node bench.js TOKENIZER_JSON TEXT_FILE [RUNS]
'use strict';
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require(path.join(__dirname, '..', '..', 'golden', 'node_modules', 'tokenizers'));

async function timeIt(tok, s, runs) {
  const n = (await tok.encode(s, null, { addSpecialTokens: false })).getIds().length;
  const d = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await tok.encode(s, null, { addSpecialTokens: false });
    d.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  d.sort((a, b) => a - b);
  return [n, d[Math.floor(d.length / 2)]];
}

async function main() {
  const [tokPath, textPath, runsArg] = process.argv.slice(2);
  const runs = Number(runsArg || 7);
  const t0 = process.hrtime.bigint();
  const tok = Tokenizer.fromFile(tokPath);
  const load = Number(process.hrtime.bigint() - t0) / 1e6;
  const s = fs.readFileSync(textPath, 'utf8');
  const [n, med] = await timeIt(tok, s, runs);
  const [, medA] = await timeIt(tok, 'a'.repeat(100000), runs);
  console.log(`hf   load=${load.toFixed(0)}ms bytes=${Buffer.byteLength(s)} tokens=${n} encode_median=${med.toFixed(1)}ms a100k_median=${medA.toFixed(1)}ms`);
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
