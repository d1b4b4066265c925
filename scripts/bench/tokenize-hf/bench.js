// Times Hugging Face's Rust tokenizer (npm tokenizers, from
// scripts/golden/node_modules) encoding a text file: one warm-up, then the
// median wall time of several encodes, and of "a"*100000, and the SHA-256
// of the ids. Only the encode call is timed (it includes the N-API
// crossing); reading the ids out with getIds() is not.
//
// usage: node bench.js TOKENIZER_JSON TEXT_FILE [RUNS [MODE]]
//
// MODE says which call encodes what:
//   whole  (default) encode(text): the whole file as one document
//   lines  encode(line) for each line, one call after another
//   batch  encodeBatch(lines): every line as a document, in one call
//
// The Node binding has no id-only call: encode and encodeBatch both run the
// Rust encode_char_offsets / encode_batch_char_offsets, which build the
// full Encoding (ids, type ids, tokens, char offsets, masks). encodeBatch is
// the cheapest way to ids for many documents: one crossing for all of
// them, and Rust encodes them in parallel on rayon's pool (one thread a
// core) unless TOKENIZERS_PARALLELISM=false, which makes it serial.
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require(path.join(__dirname, '..', '..', 'golden', 'node_modules', 'tokenizers'));

const opts = { addSpecialTokens: false };

// encodeAll encodes docs as mode says and returns the Encodings.
async function encodeAll(tok, docs, mode) {
  if (mode === 'batch') return tok.encodeBatch(docs, opts);
  const out = [];
  for (const s of docs) out.push(await tok.encode(s, null, opts));
  return out;
}

async function timeIt(tok, docs, runs, mode) {
  const ids = [];
  for (const e of await encodeAll(tok, docs, mode)) for (const id of e.getIds()) ids.push(id);
  const d = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await encodeAll(tok, docs, mode);
    d.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  d.sort((a, b) => a - b);
  return [ids, d[Math.floor(d.length / 2)]];
}

async function main() {
  const [tokPath, textPath, runsArg, modeArg] = process.argv.slice(2);
  const runs = Number(runsArg || 7);
  const mode = modeArg || 'whole';
  if (!['whole', 'lines', 'batch'].includes(mode)) throw new Error(`mode ${mode}: whole, lines or batch`);
  const t0 = process.hrtime.bigint();
  const tok = Tokenizer.fromFile(tokPath);
  const load = Number(process.hrtime.bigint() - t0) / 1e6;
  const s = fs.readFileSync(textPath, 'utf8');
  // Lines as gobench's strings.SplitAfter(s, "\n") makes them.
  const docs = mode === 'whole' ? [s] : s.split(/(?<=\n)/);
  const [ids, med] = await timeIt(tok, docs, runs, mode);
  const [, medA] = await timeIt(tok, ['a'.repeat(100000)], runs, 'whole');
  // The SHA-256 of the ids in decimal, comma-separated, as gobench writes it.
  const digest = crypto.createHash('sha256').update(Array.from(ids).join(',')).digest('hex');
  console.log(`hf   mode=${mode} load=${load.toFixed(0)}ms bytes=${Buffer.byteLength(s)} tokens=${ids.length} ids_sha256=${digest} encode_median=${med.toFixed(1)}ms a100k_median=${medA.toFixed(1)}ms`);
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
