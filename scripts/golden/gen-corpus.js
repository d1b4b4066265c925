// Writes the tokenizer test corpus: one JSON string per line. It is
// deterministic (seeded), so regenerating gives the same file.
//
// usage: node gen-corpus.js GUTENBERG_DIR OUT_JSONL
//
// GUTENBERG_DIR is the test/ folder of the Go module
// github.com/eliben/go-sentencepiece@v0.6.0 (public-domain texts).
'use strict';
const fs = require('fs');
const path = require('path');

const [gutenbergDir, outPath] = process.argv.slice(2);
if (!outPath) {
  console.error('usage: node gen-corpus.js GUTENBERG_DIR OUT_JSONL');
  process.exit(2);
}

// mulberry32: a small seeded PRNG, so the corpus does not depend on Node's.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(20261130);
const pick = (a) => a[Math.floor(rand() * a.length)];
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));

const out = [];
const seen = new Set();
const add = (s) => {
  if (!seen.has(s)) {
    seen.add(s);
    out.push(s);
  }
};

// 1. Hand-picked hard strings.
const hard = [
  '', ' ', '  ', 'a', 'A', '\n', '\r\n', '\t', ' \n', '\n ', 'Hello world',
  "I'm", "I'M", "you're", "YOU'RE", "we've", "WE'VE", "he'll", "HE'LL", "she'd", "SHE'D",
  "it's", "IT'S", "don't", "DON'T", "can't", "'s", "'S", "'ll", "'LL", "x'ſ", "'ſ", "'K", "'\u212a",
  "'ſx", "F'ſ'TH'llE", "aſ'TH", "X'ſT", "'ﬆx", "ß'T", "rock 'n' roll", "O'Neil's", "''quoted''", "the dog's bone's owner's",
  '你好，世界！', '我爱北京天安门。', '日本語のテキストです。カタカナ、ひらがな。', '한국어 텍스트입니다. 안녕하세요!',
  'Привет, мир! Съешь же ещё этих мягких французских булок.', 'مرحبا بالعالم! هذا نص عربي.',
  'שלום עולם', 'नमस्ते दुनिया', 'สวัสดีชาวโลก', 'Γειά σου Κόσμε! ΣΊΣΥΦΟΣ ς σ',
  '👍', '👨‍👩‍👧‍👦', '🏳️‍🌈', '🇺🇸🇯🇵🇩🇪', '👋🏽', '❤️', '🧑🏿‍🚀 in space', 'e\u0301', 'n\u0303o\u0308', 'Z\u0351\u036b\u0343a\u0310l\u0350g\u0311o',
  'caf\u00e9 vs cafe\u0301', '\u00a0', 'a\u00a0b', 'a\u200bb', 'a\u200db', 'a\u200cb', '\ufeffBOM', 'a\u2028b\u2029c', '\u3000全角\u3000スペース',
  'ﬁ ﬂ ﬀ', 'ſ ſt Kelvin \u212a', 'İstanbul ıi', 'Straße STRASSE', '①②③ ¼ ½ Ⅻ', '١٢٣ ۴۵۶ ०१२',
  ' '.repeat(100), ' '.repeat(1001), '\n'.repeat(50), '\r\n'.repeat(40), '\t'.repeat(30), ' \t \n \r\n '.repeat(20),
  'a'.repeat(5000), 'ab'.repeat(1000), '1'.repeat(1000), '1234567890'.repeat(50), '!'.repeat(500), '-'.repeat(300), '=\n'.repeat(100),
  '.'.repeat(200), '_'.repeat(100), '😀'.repeat(200), '中'.repeat(500), 'A'.repeat(3000),
  '3.14159 2,718 1e10 0x1F 1_000_000 12:30 2026-11-30',
  'func main() {\n\tfmt.Println("hello")\n}\n',
  'def f(x):\n    return x ** 2  # square\n\n\nclass A:\n    pass\n',
  '#include <stdio.h>\nint main(void) { printf("%d\\n", 42); return 0; }',
  '{"key": "value", "list": [1, 2.5, null, true], "nested": {"a": "b\\n"}}',
  '<html><body><p class="x">Hi &amp; bye</p></body></html>',
  'https://example.com/path/to/page?query=1&other=two#frag', 'user@example.org', 'C:\\Users\\Name\\file.txt',
  'SELECT * FROM users WHERE id = 1;', '$ echo "hi" | grep -v x > /dev/null 2>&1',
  '<|endoftext|>', 'Hello<|endoftext|>world', '<|endoftext|><|endoftext|>', ' <|endoftext|> ', '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n',
  '<|im_start|>', '<|im_end|>', '<|begin_of_text|>Hi', '<|eot_id|>', '<|start_header_id|>system<|end_header_id|>\n\n',
  '<s>', '</s>', '<unk>', '<s> hello </s>', 'a<s>b', '<0x41>', '<think>\n</think>\n', '<|endoftext', 'endoftext|>', '<|<|endoftext|>|>',
  '<|fim_prefix|>x<|fim_suffix|>y<|fim_middle|>', '<tool_call>{"a":1}</tool_call>',
  'Mixed 中文 English русский 123 😀!', 'ALLCAPS WORDS HERE', 'camelCaseIdentifierName snake_case_name kebab-case-name',
  '   leading spaces', 'trailing spaces   ', '\n\nleading newlines', 'trailing newlines\n\n', 'a \n b \n\n c',
  'x  \n  y', 'word\n    \nThis', ' \n', 'end.\n\n\n', '  \t\n  \t', '?!?!', '...', '—–-', '“smart quotes” ‘single’',
  '¡Hola! ¿Qué tal?', 'Ça va? Où est-ce?', 'Zürich Ærø Øst', '™®©', '∑∫√∞≠≤≥', '│┌┐└┘├┤', '€£¥₹₽', '\u0000\u0001\u001f\u007f',
  '\u0085next line', 'tab\tseparated\tvalues\n1\t2\t3',
  // Added-token flags (used by the synthetic tokenizers of gen-synthetic.js).
  '<mask>', ' <mask> x', 'a  <mask>  b', 'a<mask>b', '<mask><mask>', '\t<mask>\n', '[MASK]', 'x [MASK] y', 'x\u00a0[MASK]\u3000y',
  'Hello', 'HelloWorld', 'say Hello!', '_Hello', 'Hello_', 'éHello', 'Hello1', '1Hello', 'HELLO hello', 'Ｈｅｌｌｏ',
  'ab', 'xab', 'ab ab', 'abab', ' ab', 'a b', 'ｆｉ ①', 'mixed-case-with-dashes, and. dots', 'aeiou uoiea', '123 4567 89012',
];
hard.forEach(add);

// 2. Random mixes from character pools.
const pools = [
  'abcdefghijklmnopqrstuvwxyz'.split(''),
  'ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split(''),
  '0123456789'.split(''),
  ' '.split('').concat([' ', ' ', ' ', '  ', '\t', '\n', '\r\n', '\r', '\u00a0', '\u3000', '\u2028', '\u200b', '\u2009']),
  '.,;:!?\'"()[]{}<>-_=+*/\\|@#$%^&~`'.split(''),
  ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'VE", "'M", "'LL", "'D", "'ſ", "'\u212a"],
  '的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年'.split(''),
  'あいうえおかきくけこアイウエオカキクケコー'.split(''),
  '가나다라마바사아자차카타파하한국어'.split(''),
  'абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВГД'.split(''),
  'ابتثجحخدذرزسشصضطظعغفقكلمنهوي'.split(''),
  ['😀', '👍', '🏽', '\u200d', '👨‍👩‍👧', '🇫🇷', '❤️', '\ufe0f', '🎉', '🤖'],
  ['\u0301', '\u0308', '\u0303', 'é', 'ñ', 'ü', 'ç', 'ø', 'å', 'ß', 'ſ', '\u212a', 'İ', 'ı', 'ﬁ', 'Σ', 'ς'],
  ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<s>', '</s>', '<|begin_of_text|>', '<unk>', '<0x0A>', '<|', '|>'],
  ['the', ' the', 'The', ' and', 'ing', 'tion', ' of', 'hello', 'world', '123', '3.14', 'http://', '.com', 'func', '()', '{}', '\n\n'],
];
for (let i = 0; i < 1500; i++) {
  const k = int(1, 4);
  const chosen = [];
  for (let j = 0; j < k; j++) chosen.push(pick(pools));
  const n = i % 10 === 0 ? int(100, 600) : int(1, 60);
  let s = '';
  for (let j = 0; j < n; j++) s += pick(pick(chosen));
  add(s);
}

// 3. Slices of public-domain texts.
const files = fs.readdirSync(gutenbergDir).filter((f) => f.endsWith('.txt')).sort();
for (const f of files) {
  const text = fs.readFileSync(path.join(gutenbergDir, f), 'utf8');
  const chars = Array.from(text);
  for (let i = 0; i < 60; i++) {
    const len = i % 15 === 0 ? int(2000, 8000) : int(20, 1200);
    const start = int(0, Math.max(0, chars.length - len));
    add(chars.slice(start, start + len).join(''));
  }
}

fs.writeFileSync(outPath, out.map((s) => JSON.stringify(s)).join('\n') + '\n');
console.error(`${outPath}: ${out.length} strings`);
