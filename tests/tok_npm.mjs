// tok_npm.mjs — for t_tokenizer_npm.sh: independent tokenizers from npm against glassbox.
//   node tests/tok_npm.mjs prepare NODE_MODULES OUT   writes OUT/{gpt2,llama2,llama3,gpt2-nfc,gpt2-nfkc}/tokenizer.json
//        built from each package's own vocabulary and merges (the layout the Hugging Face hub
//        ships for that family), the corpus OUT/raw.bin and OUT/clean.bin (NUL-separated
//        records; clean = raw with invalid UTF-8 replaced by U+FFFD, which is what a JS string
//        can hold), and each package's ids for clean.bin in OUT/FAMILY.want (a line a record);
//        special.bin has special tokens typed in (FAMILY-special.want: ids with them matched),
//        llama3-template.want the first 200 records with <|begin_of_text|> first.
//   node tests/tok_npm.mjs compare WANT GOT NAME       counts identical lines, prints the rate
//        and the first differences; exits 1 unless every line is identical.
// Nothing here downloads: the packages were installed by the shell script with npm.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const [mode, a1, a2, a3] = process.argv.slice(2);

if (mode === 'compare') {
	const want = fs.readFileSync(a1, 'utf8').split('\n');
	const got = fs.readFileSync(a2, 'utf8').split('\n');
	let same = 0, shown = 0;
	const n = want.length - 1; // both end with a newline
	for (let i = 0; i < n; i++) {
		if (want[i] === got[i]) { same++; continue; }
		if (shown++ < 5) console.log(`# ${a3} record ${i + 1}: want [${want[i].slice(0, 150)}]\n#   got  [${(got[i] || '').slice(0, 150)}]`);
	}
	console.log(`# ${a3}: ${same} of ${n} records give identical ids (${(100 * same / n).toFixed(2)}%)`);
	process.exit(same === n && got.length - 1 === n ? 0 : 1);
}

const mods = a1, out = a2;
const require = createRequire(path.join(mods, 'x.js'));
const write = (f, s) => fs.writeFileSync(path.join(out, f), s);

// ---- the corpus: >= 2,000 records mixing English, code, numbers, whitespace runs, emoji, CJK,
// accents and invalid UTF-8, from a fixed seed. Left out on purpose: U+2581 (SentencePiece's
// space mark: a literal one decodes as a space), NUL (the record separator), and the few
// characters whose \s-ness differs between JavaScript and PCRE (U+0085, U+180E, U+FEFF).
let seed = 0x2545F491;
const rnd = (n) => { seed ^= seed << 13; seed >>>= 0; seed ^= seed >>> 17; seed ^= seed << 5; seed >>>= 0; return seed % n; };
const pick = (arr) => arr[rnd(arr.length)];
const english = ["The quick brown fox jumps over the lazy dog.", "I'M sure it's fine, isn't it?", "They'll say we'd've known.",
	"HELLO World", "Don't panic!", "A teacher's notes: tokens, embeddings, attention.", "she said \"yes\" -- twice",
	"e.g. (see above) and/or [1]", "It'S THE END'S END", "well...", "mother-in-law's car", "O'Neill's 2nd book",
	"you're", "WE'VE", "the end.", "Hello, world", "a", "Tokenization isn't magic"];
const code = ["int main(void) {\n\treturn 0;\n}", "for (let i = 0; i < n; i++) x += a[i] * b[i];",
	"def f(x):\n    return x ** 2  # square", "if (p != NULL && *p == '\\0') p++;", "#include <stdio.h>",
	"SELECT * FROM t WHERE id = 42;", "a->b.c[3] = {0x1F, 0b1010};", "    }\n  }\n}", "x=>x+1", "$HOME/.config/glassbox",
	"printf(\"%d\\n\", n);", "  \t  return;", "<div class=\"x\">&amp;</div>", "git commit -m 'fix'"];
const numbers = () => pick([String(rnd(10)), String(rnd(100000)), String(rnd(1e9)) + String(rnd(1e9)), "2026", "3.14159",
	"1,234,567", "+44 20 7946 0958", "0.000001", "1e-9", "12:30", "-273.15", "v1.2.3", "x2", "42nd", "١٢٣", "²³", "½"]);
const spaces = () => pick(["  ", "   ", "\t", "\t\t", " \t ", "\n", "\n\n", "\r\n", "\n \n", "    ", "\u00a0", "\u3000", "        ", " \n\n "]);
const emoji = ["😀", "👍🏽", "👨‍👩‍👧", "🇫🇷", "❤️", "🤖 robot", "✨✨", "🙂🙃", "😀😀😀", "🧠"];
const cjk = ["中文", "日本語のテキスト", "한국어 문장", "你好，世界。", "東京都", "テスト", "漢字かな交じり文", "、。「」"];
const accents = ["café", "naïve", "Ελληνικά", "Русский язык", "e\u0301", "Ångström", "Straße", "façade", "jalapeño", "Ærø", "ŧĥǿŗņ",
	// for the Unicode normal forms (the NFC / NFKC families): ligatures, an angstrom sign, circled
	// and full-width forms, decomposed Hangul, a Roman numeral
	"\ufb01ne \ufb02our", "\u212b", "\u2460\u2461", "\uff46\uff55\uff4c\uff4c", "\u1100\u1161\u11a8", "\u216b", "A\u030a"];
const invalid = [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xf0, 0x9f, 0x98], [0x80, 0x80], [0xfe, 0xff]];
const parts = [() => pick(english), () => pick(code), numbers, spaces, () => pick(emoji), () => pick(cjk), () => pick(accents)];
const enc = new TextEncoder();
const records = [];
for (let i = 0; i < 2400; i++) {
	const bytes = [];
	const k = 1 + rnd(7);
	for (let j = 0; j < k; j++) {
		if (rnd(9) === 0) bytes.push(...pick(invalid));
		else bytes.push(...enc.encode(parts[rnd(parts.length)]()));
		if (j + 1 < k) bytes.push(...enc.encode(pick([" ", "", " ", "\n", ", ", "  ", "\t"])));
	}
	if (i % 50 === 0) bytes.length = 0; // some empty records
	records.push(Uint8Array.from(bytes));
}
// Records with special tokens typed in, for encoding with them matched (tokenize --special):
// GPT-2's <|endoftext|> and Llama 3's chat markers, each plain text to the other family.
const specials = ['<|endoftext|>', '<|begin_of_text|>', '<|start_header_id|>', '<|end_header_id|>', '<|eot_id|>',
	'<|reserved_special_token_7|>', '<|python_tag|>', '<|end_of_text|>'];
const special = [];
for (let i = 0; i < 300; i++) {
	let s = '';
	const k = 1 + rnd(6);
	for (let j = 0; j < k; j++) {
		s += rnd(3) ? parts[rnd(parts.length)]() : pick(specials);
		s += pick(['', ' ', '\n\n', '']);
	}
	special.push(s);
}
const dec = new TextDecoder('utf-8'); // invalid sequences become U+FFFD
const clean = records.map((r) => dec.decode(r));
const join = (list) => Buffer.concat(list.flatMap((b) => [Buffer.from(b), Buffer.from([0])]));
write('raw.bin', join(records));
write('clean.bin', join(clean.map((s) => enc.encode(s))));
write('special.bin', join(special.map((s) => enc.encode(s))));

// ---- GPT-2: gpt-3-encoder's encoder.json + vocab.bpe (GPT-2's own files); ids from js-tiktoken
// and gpt-3-encoder both.
{
	const dir = path.dirname(require.resolve('gpt-3-encoder/Encoder.js'));
	const vocab = JSON.parse(fs.readFileSync(path.join(dir, 'encoder.json'), 'utf8'));
	const merges = fs.readFileSync(path.join(dir, 'vocab.bpe'), 'utf8').split('\n').slice(1).filter((l) => l.length);
	const bl = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
	const tj = { version: '1.0', truncation: null, padding: null,
		added_tokens: [{ id: 50256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: true }],
		normalizer: null, pre_tokenizer: bl, post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
		decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
		model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false,
			byte_fallback: false, vocab, merges } };
	fs.mkdirSync(path.join(out, 'gpt2'), { recursive: true });
	write('gpt2/tokenizer.json', JSON.stringify(tj));
	const { getEncoding } = require('js-tiktoken');
	const tk = getEncoding('gpt2');
	write('gpt2.want', clean.map((s) => tk.encode(s).join(' ') + '\n').join(''));
	write('gpt2-special.want', special.map((s) => tk.encode(s, 'all').join(' ') + '\n').join(''));
	// The same vocabulary behind a Unicode normalizer (Qwen2's tokenizer.json has NFC): the
	// expected ids are js-tiktoken's on JavaScript's own String.normalize of each record.
	for (const form of ['NFC', 'NFKC']) {
		const name = 'gpt2-' + form.toLowerCase();
		const nt = { ...tj, normalizer: { type: form }, added_tokens: tj.added_tokens.map((a) => ({ ...a, normalized: false })) };
		fs.mkdirSync(path.join(out, name), { recursive: true });
		write(name + '/tokenizer.json', JSON.stringify(nt));
		write(name + '.want', clean.map((s) => tk.encode(s.normalize(form)).join(' ') + '\n').join(''));
	}
	const g3 = require('gpt-3-encoder');
	write('gpt2-g3e.want', clean.map((s) => g3.encode(s).join(' ') + '\n').join(''));
}

// ---- Llama 1/2 (SentencePiece BPE with byte fallback): llama-tokenizer-js's vocabulary and
// merges, in Llama 2's hub layout.
{
	const { default: lt } = await import(path.join(mods, 'llama-tokenizer-js', 'llama-tokenizer.js'));
	const vocab = {};
	lt.vocabById.forEach((s, i) => { vocab[s] = i; });
	const merges = [...lt.merges.keys()];
	const sp = '\u2581';
	const added = ['<unk>', '<s>', '</s>'].map((c, id) => ({ id, content: c, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }));
	const tj = { version: '1.0', truncation: null, padding: null, added_tokens: added,
		normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: sp }, { type: 'Replace', pattern: { String: ' ' }, content: sp }] },
		pre_tokenizer: null,
		post_processor: { type: 'TemplateProcessing', single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
			pair: [], special_tokens: { '<s>': { id: '<s>', ids: [1], tokens: ['<s>'] } } },
		decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: sp }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' },
			{ type: 'Strip', content: ' ', start: 1, stop: 0 }] },
		model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: true,
			byte_fallback: true, vocab, merges } };
	fs.mkdirSync(path.join(out, 'llama2'), { recursive: true });
	write('llama2/tokenizer.json', JSON.stringify(tj));
	write('llama2.want', clean.map((s) => lt.encode(s, false, true).join(' ') + '\n').join(''));
}

// ---- Llama 3 (byte-level BPE, regex Split, ignore_merges): llama3-tokenizer-js's data.
{
	const { default: l3 } = await import(path.join(mods, 'llama3-tokenizer-js', 'bundle', 'llama3-tokenizer-with-baked-data.js'));
	const vocab = {}, added = [];
	l3.vocabById.forEach((s, i) => {
		if (i < 128000) vocab[s] = i;
		else added.push({ id: i, content: s, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
	});
	const merges = [...l3.merges.keys()].map((k) => k.split(' '));
	const pattern = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
	const tj = { version: '1.0', truncation: null, padding: null, added_tokens: added, normalizer: null,
		pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated', invert: false },
			{ type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }] },
		post_processor: { type: 'Sequence', processors: [{ type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
			{ type: 'TemplateProcessing', single: [{ SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
				pair: [], special_tokens: { '<|begin_of_text|>': { id: '<|begin_of_text|>', ids: [128000], tokens: ['<|begin_of_text|>'] } } }] },
		decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
		model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false,
			byte_fallback: false, ignore_merges: true, vocab, merges } };
	fs.mkdirSync(path.join(out, 'llama3'), { recursive: true });
	write('llama3/tokenizer.json', JSON.stringify(tj));
	write('llama3.want', clean.map((s) => l3.encode(s, { bos: false, eos: false }).join(' ') + '\n').join(''));
	write('llama3-special.want', special.map((s) => l3.encode(s, { bos: false, eos: false }).join(' ') + '\n').join(''));
	write('llama3-template.want', clean.slice(0, 200).map((s) => l3.encode(s, { bos: true, eos: false }).join(' ') + '\n').join(''));
	write('template.bin', join(clean.slice(0, 200).map((s) => enc.encode(s))));
}
console.log(`# corpus: ${records.length} records, ${records.filter((r) => dec.decode(r).includes('\ufffd')).length} with invalid UTF-8`);
