// Writes the tokenizer test corpus: one JSON string per line. It is
// deterministic (seeded), so regenerating gives the same file.
//
// usage: node gen-corpus.js GUTENBERG_DIR OUT_JSONL [EDGE_JSONL]
//
// EDGE_JSONL, when given, gets the Unicode edge cases (section 4) alone.
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

// 4. Unicode edge cases, with their own seeded generator so that the
// strings above stay as they were: long runs of combining marks (more than
// the 30 of the stream-safe format), code points that Unicode assigned
// after 9.0 (Hugging Face normalizes with 9.0 tables but matches patterns
// with Oniguruma's 16.0 ones, and lowercases with Rust's 17.0), Indic text
// with ZWJ and ZWNJ, and mixed white space and control characters.
const edgeStart = out.length;
{
  const rand4 = rng(20261201);
  const pick4 = (a) => a[Math.floor(rand4() * a.length)];
  const int4 = (lo, hi) => lo + Math.floor(rand4() * (hi - lo + 1));
  const cp = (...cs) => String.fromCodePoint(...cs);
  // Marks of many combining classes, and ones that decompose to several.
  const marks = ['\u0301', '\u0316', '\u0327', '\u0334', '\u0345', '\u05b0', '\u093c', '\u094d', '\u0e38', '\u302a',
    '\u1dce', '\u20d2', '\u0f71', '\u0f72', '\u0f74', '\u0f80', '\u0f81', '\u0344', '\u0f73', '\u0f75', '\u0308',
    '\u0300', '\u0303', '\u031b', '\u0323', '\u0307', '\u0338', '\u1ab0', '\u0670', '\u0342', '\u0313', '\u0314'];
  const bases = ['a', 'e', 'o', 'A', 'ο', 'α', 'ι', 'ω', 'ᄀ', '가', 'ก', 'क', 'ক', 'ǖ', 'ệ', 'ﬁ', '\ufdfa', '①', ' ', '\n', ''];
  for (const n of [29, 30, 31, 32, 33, 45, 64, 100]) {
    add('a' + '\u0301'.repeat(n));
    add('x' + '\u0301'.repeat(n) + ' y');
    add('\u0301'.repeat(n));
  }
  add('a' + '\u0301'.repeat(20) + '\u034f' + '\u0301'.repeat(20));
  add('e' + '\u0316\u0301'.repeat(20) + 'e\u0301');
  for (let i = 0; i < 120; i++) {
    const b = pick4(bases);
    let s = i % 3 === 0 ? 'word ' : '';
    s += b;
    const n = int4(25, 90);
    for (let j = 0; j < n; j++) s += pick4(marks);
    if (i % 2 === 0) s += pick4([' and more', 'x', '\u0301', '.', '中']);
    add(s);
  }
  // Code points assigned after Unicode 9.0, by version: marks, letters with
  // (compatibility) decompositions, cased letters, digits, symbols.
  const newer = [
    // 10.0
    0x0860, 0x0d00, 0x0d3b, 0x1cf7, 0x1df6, 0x20bf, 0x312e, 0x9fd6, 0x11a01, 0x11a33, 0x11a47, 0x11d31, 0x11d45, 0x1b001, 0x1f6d3, 0x2ceb0,
    // 11.0
    0x0560, 0x05ef, 0x07fd, 0x08d3, 0x09fe, 0x0a76, 0x0c04, 0x1c90, 0x1cbd, 0x10d00, 0x10d24, 0x10f46, 0x11f, 0x16e40, 0x16e60, 0x1d2e0, 0x1ecb1, 0x1f94d,
    // 12.0 and 12.1
    0x0eba, 0x0ebc, 0x0c77, 0x1e100, 0x1e130, 0x1e2c0, 0x1e2ec, 0x1fa70, 0x32ff, 0x11a9d, 0x119d1, 0x119e0, 0x1e14f,
    // 13.0
    0x08be, 0x0b55, 0x0d81, 0x1abf, 0x1ac0, 0x10e80, 0x10eab, 0x11930, 0x11935, 0x11938, 0x1fb00, 0x1fbf0, 0x30000, 0x1f972,
    // 14.0
    0x0870, 0x0898, 0x0c3c, 0x10570, 0x10597, 0x10780, 0x107ba, 0xa7f2, 0x11f00, 0x1e290, 0x1e7e0, 0x1df00, 0x1faf0, 0x1cf00,
    // 15.0 and 15.1
    0x0cf3, 0x0ecd, 0x1e030, 0x1e06d, 0x1e08f, 0x1e4d0, 0x1e4ec, 0x11f02, 0x11f41, 0x1f7d9, 0x1fa75, 0x31350, 0x2ebf0, 0x2ffc, 0x31ef,
    // 16.0
    0x0897, 0x1c89, 0x1c8a, 0xa7cb, 0xa7cc, 0xa7da, 0xa7dc, 0x10d40, 0x10d4a, 0x10d50, 0x10d69, 0x10d70, 0x105c0, 0x105c9, 0x105d2,
    0x11380, 0x11383, 0x113b8, 0x113c2, 0x113c9, 0x1611e, 0x16121, 0x16d40, 0x16d70, 0x1ccd6, 0x1ccf0, 0x1cc00, 0x1fa89, 0x1fae9, 0x1f8b2,
    // 17.0 (unassigned for Oniguruma's 16.0 tables)
    0x10940, 0x16ea0, 0x16ebb, 0xa7ce, 0xa7cf, 0xa7d2, 0x1fac8, 0x323b0, 0x11db0, 0x1e6c0,
  ];
  const pool4 = ['a', 'b', 'A', 'Z', 'é', 'e', ' ', ' ', '\u0301', '\u0331', '\u0323', '.', ',', '1', '٣', '中', '가', 'क', '\n'];
  add(cp(0x09fe, 0x0331));
  add('ক' + cp(0x09fe, 0x0331) + ' ক');
  add('ກ' + cp(0x0eba, 0x0ec8) + ' ' + cp(0x0eba));
  add(cp(0x32ff) + ' 令和 ' + cp(0x32ff));
  add(' ' + cp(0x1fa89));
  add('song' + ' ' + cp(0x1fa89) + ' ' + cp(0x1fa89, 0x1fa89) + '!');
  add(cp(0x1611e, 0x1611e) + ' ' + cp(0x105d2, 0x0307) + ' ' + cp(0x11382, 0x113c9) + ' ' + cp(0x1611e, 0x16129));
  add(cp(0x10d50, 0x10d51, 0x10d52) + ' ' + cp(0x10d40, 0x10d41, 0x10d42, 0x10d43) + ' GARAY');
  add(cp(0xa7ce, 0xa7d2, 0x16ea0, 0x1c89, 0xa7cb, 0x1c90) + ' LOWER ME');
  for (const c of newer) {
    add(cp(c));
    add('a' + cp(c) + '\u0301b ' + cp(c) + cp(c));
  }
  for (let i = 0; i < 150; i++) {
    let s = '';
    const n = int4(2, 40);
    for (let j = 0; j < n; j++) s += rand4() < 0.4 ? cp(pick4(newer)) : pick4(pool4);
    add(s);
  }
  // Indic text with ZWJ (U+200D) and ZWNJ (U+200C), and Persian ZWNJ.
  const indic = [
    'क्\u200dष', 'क्\u200cष', 'र्\u200dय', 'नमस्ते दुनिया', 'मराठी र\u200d्या', 'ক্\u200dষ', 'র\u200d্য', 'ന്\u200d', 'ണ്\u200d',
    'അവന്\u200d വന്നു', 'ശ്രീ\u200c', 'ශ්\u200dරී ලංකා', 'ක්\u200dෂ', 'ರ್\u200d', 'క్\u200cష', 'க்ஷ', 'ક્\u200dષ', 'ਕ੍ਹ',
    'କ୍\u200dଷ', 'می\u200cخواهم', 'نمی\u200cدانم', 'हिन्दी\u200c में', 'ज़\u200dिन्दगी', '\u200d', '\u200c', '\u200d\u200c\u200d',
  ];
  indic.forEach(add);
  const scripts = [
    'कखगघङचछजझटठडढणतथदधनपफबभमयरलवशषसह'.split(''), 'ािीुूृेैोौंःँ़्'.split(''),
    'কখগঘঙচছজঝটঠডঢণতথদধনপফবভমযরলশষসহ'.split(''), 'ািীুূৃেৈোৌংঃঁ়্'.split(''),
    'கஙசஞடணதநபமயரலவழளறன'.split(''), 'ாிீுூெேைொோௌ்'.split(''),
    'കഖഗഘങചഛജഝഞടഠഡഢണതഥദധനപഫബഭമയരലവശഷസഹ'.split(''), 'ാിീുൂൃെേൈൊോൌ്ം'.split(''),
    ['\u200d', '\u200c', '\u200d', ' ', ' ', '।', '०', '१', '\u0951', '\u0952', '\u093d', '\u0970'],
  ];
  for (let i = 0; i < 200; i++) {
    const k = int4(0, 3) * 2;
    let s = '';
    const n = i % 10 === 0 ? int4(100, 400) : int4(2, 50);
    for (let j = 0; j < n; j++) s += pick4(pick4([scripts[k], scripts[k], scripts[k + 1], scripts[8]]));
    add(s);
  }
  // White space and control characters.
  const ws = [' ', ' ', '\t', '\n', '\r', '\r\n', '\v', '\f', '\x00', '\x01', '\x08', '\x1b', '\x1c', '\x1d', '\x1e', '\x1f',
    '\x7f', '\x85', '\xa0', '\u1680', '\u180e', '\u2000', '\u2002', '\u2007', '\u2009', '\u200a', '\u200b', '\u2028',
    '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff', '\u00ad', '\u2060', '\u061c', '\u200e'];
  const filler = ['word', 'Word', 'x', '1', '42', '.', '!', '--', '中文', 'é', '🙂', "'s", '(', ')'];
  for (let i = 0; i < 250; i++) {
    let s = '';
    const n = int4(1, 60);
    for (let j = 0; j < n; j++) s += rand4() < 0.55 ? pick4(ws) : pick4(filler);
    add(s);
  }
  for (const w of ws) {
    add('a' + w + 'b');
    add(w + w + 'x' + w);
    add('end' + w);
  }
}

fs.writeFileSync(outPath, out.map((s) => JSON.stringify(s)).join('\n') + '\n');
if (process.argv[4]) fs.writeFileSync(process.argv[4], out.slice(edgeStart).map((s) => JSON.stringify(s)).join('\n') + '\n');
console.error(`${outPath}: ${out.length} strings`);
