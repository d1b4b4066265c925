// Command gentext writes varied multilingual text for tokenizer benchmarks:
// paragraphs of English (public-domain Gutenberg lines from -english) and
// of made-up words in Chinese, Japanese, Korean, Cyrillic, Greek, Arabic,
// Hebrew, Devanagari (with ZWJ and ZWNJ), Bengali, Thai, Vietnamese with
// combining marks, emoji, code, numbers and mixed white space, in seeded
// random order, until -bytes are written (cut at a line end, so no
// character is split).
//
//	go run ./scripts/bench/tokenize-hf/gentext -english DIR -bytes 4000000 > text.txt
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Character pools of the made-up scripts; words are 1-8 draws.
var scripts = map[string][]string{
	"zh":    split("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单据导影失拿网香似斯专石若兵弟谁校读志飞观争究包组造落视济喜离虽坐集编宝谈府拉黑且随格尽剑讲布杀微怕母调局根曾准团段终乐切级克精哪官示冷域"),
	"ja":    split("あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをんアイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワヲンー日本語東京"),
	"ko":    split("가나다라마바사아자차카타파하한국어서울대학교사람시간일문제경우세계생각정부사회국가오늘지금때문"),
	"ru":    split("абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВГДЕЖЗИЙКЛМНОПРСТУФХЦЧШЩЭЮЯ"),
	"el":    split("αβγδεζηθικλμνξοπρστυφχψωάέήίόύώΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩς"),
	"ar":    split("ابتثجحخدذرزسشصضطظعغفقكلمنهويءآأإةى"),
	"he":    split("אבגדהוזחטיכלמנסעפצקרשתךםןףץ"),
	"hi":    append(split("कखगघङचछजझटठडढणतथदधनपफबभमयरलवशषसहािीुूृेैोौंः़्"), "\u200d", "\u200c"),
	"bn":    split("কখগঘঙচছজঝটঠডঢণতথদধনপফবভমযরলশষসহািীুূৃেৈোৌং্"),
	"th":    split("กขคฆงจฉชซฌญฎฏฐฑฒณดตถทธนบปผฝพฟภมยรลวศษสหฬอฮะาำิีึืุูเแโใไ่้๊๋"),
	"vi":    append(split("aăâbcdđeêghiklmnoôơpqrstuưvxy"), "\u0300", "\u0301", "\u0303", "\u0309", "\u0323"),
	"emoji": split("😀😂🥲😍🤔👍👎🙏🔥✨🎉❤️💯🚀🌍🍕⚽🎵📱💻🧑‍💻👨‍👩‍👧🏳️‍🌈🇺🇸🇯🇵👋🏽🪉🫈"),
}

func split(s string) []string {
	var out []string
	for _, r := range s {
		out = append(out, string(r))
	}
	return out
}

var code = []string{
	"func main() {\n\tfmt.Println(\"hello, world\")\n}\n",
	"for (let i = 0; i < n; i++) { total += xs[i] * 2; }\n",
	"def f(x):\n    return {\"key\": [x, x ** 2, None]}\n",
	"SELECT id, name FROM users WHERE created_at > '2026-01-01' ORDER BY id;\n",
	"<div class=\"row\"><a href=\"https://example.com/a?b=1&c=2\">link</a></div>\n",
	"{\"model\": \"qwen3\", \"max_tokens\": 512, \"temperature\": 0.7, \"stream\": true}\n",
}

func main() {
	english := flag.String("english", "", "folder with Gutenberg .txt files")
	size := flag.Int("bytes", 4_000_000, "bytes to write")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	var lines []string
	files, _ := filepath.Glob(filepath.Join(*english, "*.txt"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gentext:", err)
			os.Exit(1)
		}
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
	}
	if len(lines) == 0 {
		fmt.Fprintln(os.Stderr, "gentext: no English text in -english")
		os.Exit(2)
	}
	names := make([]string, 0, len(scripts))
	for n := range scripts {
		names = append(names, n)
	}
	slices.Sort(names) // map order is random

	rng := rand.New(rand.NewPCG(*seed, 7))
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	spaces := []string{" ", " ", " ", " ", "  ", "\t", " \u00a0", "\u3000"}
	punct := []string{".", ",", "!", "?", ";", ":", "—", "…", "。", "、", "？", "«", "»", "(", ")", "'s", "\"", "-"}
	written := 0
	for written < *size {
		var b strings.Builder
		switch k := rng.IntN(10); {
		case k < 4: // English, a few lines
			for range 1 + rng.IntN(6) {
				b.WriteString(lines[rng.IntN(len(lines))])
				b.WriteByte(' ')
			}
		case k < 5:
			b.WriteString(code[rng.IntN(len(code))])
			fmt.Fprintf(&b, "%d %d.%02d %x ", rng.IntN(100000), rng.IntN(1000), rng.IntN(100), rng.Uint32())
		default: // made-up words in one or two scripts
			a, c := scripts[names[rng.IntN(len(names))]], scripts[names[rng.IntN(len(names))]]
			for range 5 + rng.IntN(40) {
				pool := a
				if rng.IntN(5) == 0 {
					pool = c
				}
				for range 1 + rng.IntN(8) {
					b.WriteString(pool[rng.IntN(len(pool))])
				}
				if rng.IntN(6) == 0 {
					b.WriteString(punct[rng.IntN(len(punct))])
				}
				b.WriteString(spaces[rng.IntN(len(spaces))])
			}
		}
		b.WriteString("\n")
		if rng.IntN(4) == 0 {
			b.WriteString("\n")
		}
		n, _ := w.WriteString(b.String())
		written += n
	}
}
