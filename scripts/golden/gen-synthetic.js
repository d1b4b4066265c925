// Writes small synthetic tokenizer.json files that exercise the parts of
// the format the real test tokenizers do not use: Metaspace, Digits, every
// Split behavior with and without invert, Strip/Lowercase/NFKC/Replace
// normalizers, single_word/lstrip/rstrip/normalized added tokens, unknown
// tokens with fuse_unk, and the SentencePiece-style decoders. Their
// vocabularies are the first 3,000 merges of GPT-2 (built by build-gpt2.js);
// the SentencePiece-style ones write "Ġ" as "▁" and add <0xNN> tokens.
//
// usage: node gen-synthetic.js GPT2_TOKENIZER_JSON OUT_DIR
'use strict';
const fs = require('fs');
const path = require('path');

const [gpt2Path, outDir] = process.argv.slice(2);
if (!outDir) {
  console.error('usage: node gen-synthetic.js GPT2_TOKENIZER_JSON OUT_DIR');
  process.exit(2);
}
const gpt2 = JSON.parse(fs.readFileSync(gpt2Path, 'utf8'));
const K = 3000;
const blVocab = {};
for (const [t, id] of Object.entries(gpt2.model.vocab)) {
  if (id < 256 + K) blVocab[t] = id;
}
const blMerges = gpt2.model.merges.slice(0, K);

// SentencePiece style: "▁" for the space, <unk> and byte fallback tokens.
const spVocab = {};
for (const [t, id] of Object.entries(blVocab)) spVocab[t.replace(/Ġ/g, '\u2581')] = id;
const spMerges = blMerges.map((m) => m.replace(/Ġ/g, '\u2581'));
let next = 256 + K;
for (const t of ['<unk>', '<s>', '</s>']) spVocab[t] = next++;
for (let b = 0; b < 256; b++) spVocab[`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`] = next++;
const spNext = next;

// End-of-word suffix (as CLIP uses): every token also with "</w>", and
// each merge also as the merge that ends a word.
const sfVocab = {};
const sfMerges = [];
{
  let id = 0;
  for (const t of Object.keys(blVocab)) sfVocab[t] = id++;
  for (const t of Object.keys(blVocab)) sfVocab[t + '</w>'] = id++;
  for (const m of blMerges) {
    const [a, b] = m.split(' ');
    sfMerges.push([a, b], [a, b + '</w>']);
  }
}

// Continuing-subword prefix: every token also with "##", and each merge
// also between two continuation pieces.
const pfVocab = {};
const pfMerges = [];
{
  let id = 0;
  for (const t of Object.keys(spVocab)) pfVocab[t] = id++;
  for (const t of Object.keys(spVocab)) pfVocab['##' + t] = id++;
  for (const m of spMerges) {
    const [a, b] = m.split(' ');
    pfMerges.push([a, '##' + b], ['##' + a, '##' + b]);
  }
}

const added = (id, content, o = {}) => ({
  id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: false, ...o,
});
const bpe = (vocab, merges, o = {}) => ({
  type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
  fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges, ...o,
});
const byteLevel = (addPrefixSpace, useRegex) => ({
  type: 'ByteLevel', add_prefix_space: addPrefixSpace, trim_offsets: false, use_regex: useRegex,
});
const split = (pattern, behavior, invert) => ({ type: 'Split', pattern, behavior, invert });
const metaspace = (scheme, splitIt) => ({ type: 'Metaspace', replacement: '\u2581', prepend_scheme: scheme, split: splitIt });
const blNext = 256 + K;

const tokenizers = {
  'bl-prefix': {
    added_tokens: [
      added(blNext, '<|endoftext|>', { special: true }),
      added(blNext + 1, 'Hello', { normalized: true, single_word: true }),
      added(blNext + 2, '[MASK]', { lstrip: true, rstrip: true, special: true }),
    ],
    normalizer: { type: 'Sequence', normalizers: [{ type: 'NFKC' }, { type: 'Lowercase' }] },
    pre_tokenizer: byteLevel(true, true),
    decoder: byteLevel(true, true),
    model: bpe(blVocab, blMerges),
  },
  'bl-splits': {
    added_tokens: [added(blNext, '<|endoftext|>', { special: true })],
    normalizer: {
      type: 'Sequence', normalizers: [
        { type: 'Strip', strip_left: true, strip_right: true },
        { type: 'Replace', pattern: { Regex: '\\d{3}' }, content: '#' },
        { type: 'NFC' },
      ],
    },
    pre_tokenizer: {
      type: 'Sequence', pretokenizers: [
        split({ String: ' ' }, 'MergedWithPrevious', false),
        split({ Regex: '[aeiou]' }, 'MergedWithNext', false),
        { type: 'Digits', individual_digits: true },
        byteLevel(false, false),
      ],
    },
    decoder: byteLevel(false, false),
    model: bpe(blVocab, blMerges),
  },
  'bl-contiguous': {
    added_tokens: [],
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence', pretokenizers: [
        split({ Regex: '\\p{L}+' }, 'Contiguous', true),
        split({ Regex: '\\s+' }, 'Removed', false),
        { type: 'Digits', individual_digits: false },
        split({ Regex: '[,.]' }, 'Isolated', true),
        split({ String: '-' }, 'MergedWithNext', true),
        byteLevel(false, true),
      ],
    },
    decoder: byteLevel(false, true),
    model: bpe(blVocab, blMerges),
  },
  'sp-metaspace': {
    added_tokens: [
      added(spVocab['<unk>'], '<unk>', { special: true }),
      added(spVocab['<s>'], '<s>', { special: true }),
      added(spVocab['</s>'], '</s>', { special: true }),
    ],
    normalizer: null,
    pre_tokenizer: metaspace('always', true),
    decoder: metaspace('always', true),
    model: bpe(spVocab, spMerges, { unk_token: '<unk>', byte_fallback: true }),
  },
  'sp-first': {
    added_tokens: [
      added(spVocab['<s>'], '<s>', { special: true }),
      added(spNext, '<mask>', { lstrip: true, rstrip: true, special: true }),
    ],
    normalizer: null,
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true }, metaspace('first', false)] },
    decoder: {
      type: 'Sequence', decoders: [
        { type: 'Replace', pattern: { String: '\u2581' }, content: ' ' },
        { type: 'Fuse' },
        { type: 'Strip', content: ' ', start: 1, stop: 0 },
      ],
    },
    model: bpe(spVocab, spMerges, { unk_token: '<unk>', fuse_unk: true }),
  },
  'sp-prepend': {
    added_tokens: [
      added(spVocab['<s>'], '<s>', { special: true }),
      added(spNext, 'ab', { normalized: true }),
    ],
    normalizer: {
      type: 'Sequence', normalizers: [
        { type: 'Prepend', prepend: '\u2581' },
        { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' },
      ],
    },
    pre_tokenizer: metaspace('never', true),
    decoder: {
      type: 'Sequence', decoders: [
        { type: 'Replace', pattern: { String: '\u2581' }, content: ' ' },
        { type: 'ByteFallback' },
        { type: 'Fuse' },
        { type: 'Strip', content: ' ', start: 1, stop: 0 },
      ],
    },
    model: bpe(spVocab, spMerges, { unk_token: '<unk>', byte_fallback: true }),
  },
  'bl-suffix': {
    added_tokens: [],
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence', pretokenizers: [
        split({ Regex: '\\S+' }, 'Removed', true),
        byteLevel(false, false),
      ],
    },
    decoder: { type: 'BPEDecoder', suffix: '</w>' },
    model: bpe(sfVocab, sfMerges, { end_of_word_suffix: '</w>' }),
  },
  // Oniguruma's classes in custom patterns: \w (with marks, without ZWJ),
  // \d, POSIX brackets, scripts, class intersection.
  'bl-onig': {
    added_tokens: [added(blNext, '<|endoftext|>', { special: true })],
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence', pretokenizers: [
        split({ Regex: '\\p{Han}+|[\\w&&[^\\p{Han}]]+' }, 'Isolated', false),
        split({ Regex: '\\w+|[^\\w\\s]+|\\s+' }, 'Isolated', false),
        split({ Regex: '[[:punct:]]|\\d|[[:upper:]][[:lower:]]*' }, 'Isolated', false),
        byteLevel(false, false),
      ],
    },
    decoder: byteLevel(false, false),
    model: bpe(blVocab, blMerges),
  },
  // ByteLevel's add_prefix_space after a Split: a space before every piece.
  'bl-split-prefix': {
    added_tokens: [added(blNext, '<|endoftext|>', { special: true })],
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence', pretokenizers: [
        split({ Regex: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" }, 'Isolated', false),
        byteLevel(true, false),
      ],
    },
    decoder: byteLevel(true, true),
    model: bpe(blVocab, blMerges),
  },
  // Punctuation runs split off with Contiguous, as Falcon does.
  'bl-punct-contiguous': {
    added_tokens: [added(blNext, '<|endoftext|>', { special: true })],
    normalizer: { type: 'NFKC' },
    pre_tokenizer: {
      type: 'Sequence', pretokenizers: [
        split({ Regex: '[\\p{P}\\p{S}]' }, 'Contiguous', false),
        { type: 'Digits', individual_digits: false },
        byteLevel(false, true),
      ],
    },
    decoder: byteLevel(false, true),
    model: bpe(blVocab, blMerges),
  },
  'sp-prefix': {
    added_tokens: [added(pfVocab['<unk>'], '<unk>', { special: true })],
    normalizer: null,
    pre_tokenizer: metaspace('always', true),
    decoder: null,
    model: bpe(pfVocab, pfMerges, { unk_token: '<unk>', byte_fallback: true, continuing_subword_prefix: '##' }),
  },
};

fs.mkdirSync(outDir, { recursive: true });
for (const [name, t] of Object.entries(tokenizers)) {
  const tok = { version: '1.0', truncation: null, padding: null, ...t, post_processor: null };
  fs.writeFileSync(path.join(outDir, `${name}.json`), JSON.stringify(tok));
}
console.error(`${outDir}: ${Object.keys(tokenizers).join(', ')}`);
