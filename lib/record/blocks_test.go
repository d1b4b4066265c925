package record

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// compose writes a block-form record's messages as they are sent, blocks
// from texts.
func compose(ps []Piece, texts map[uint32]string) string {
	var b strings.Builder
	for _, p := range ps {
		if p.N == 0 {
			b.Write(p.Lit)
			continue
		}
		for i := p.First; i < p.First+p.N; i++ {
			b.WriteString(texts[i])
		}
	}
	return b.String()
}

func TestBlockForm(t *testing.T) {
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	texts := map[uint32]string{0: `sys `, 1: `one\n`, 2: `two \"q\"`, 3: `three`}
	for _, id := range []uint32{0, 1, 2} {
		if err := enc.EncodeBlock(id, []byte(texts[id])); err != nil {
			t.Fatal(err)
		}
	}
	raw := `[{"role":"system","content":[0]},{"role":"user","content":[[1,2],"tail\""]}]`
	if err := enc.Encode(&Record{Line: 1, Session: -1, Kind: KindBlockMessages, Raw: []byte(raw)}); err != nil {
		t.Fatal(err)
	}
	enc.EncodeBlock(3, []byte(texts[3]))
	raw2 := `[{"role":"user","content":[0,1,2,3]}]`
	enc.Encode(&Record{Line: 2, Session: -1, Kind: KindBlockMessages, Raw: []byte(raw2)})
	if err := enc.End(); err != nil {
		t.Fatal(err)
	}
	d := NewDecoder(&buf, "r.jsonl")
	var rec Record
	var got []string
	var blocks []uint32
	for {
		err := d.Next(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind == KindBlock {
			blocks = append(blocks, rec.Block)
			if string(rec.Raw) != texts[rec.Block] {
				t.Errorf("block %d text %q, want %q", rec.Block, rec.Raw, texts[rec.Block])
			}
			continue
		}
		got = append(got, compose(rec.Pieces, texts))
		if rec.Line == 2 && len(rec.Pieces) != 3 {
			t.Errorf("blocks 0..3 are one run: pieces %+v", rec.Pieces)
		}
	}
	want := []string{`[{"role":"system","content":"sys "},{"role":"user","content":"one\ntwo \"q\"tail\""}]`,
		`[{"role":"user","content":"sys one\ntwo \"q\"three"}]`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(blocks) != 4 || d.Count() != 2 {
		t.Errorf("composed\n%s\nwant\n%s\n(blocks %v, count %d)", strings.Join(got, "\n"), strings.Join(want, "\n"), blocks, d.Count())
	}
}

func TestBlockFormBad(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"v":1,"block":0,"text":"a"}` + "\n" + `{"v":1,"line":1,"turn":0,"block_messages":[{"role":"user","content":[[0,2]]}]}`,
			`r.jsonl:2: block_messages[0].content[0]: refers to block 0..1, not all defined earlier`},
		{`{"v":1,"block":3,"text":"a"}` + "\n" + `{"v":1,"block":3,"text":"b"}`, `r.jsonl:2: block: 3 after block 3`},
		{`{"v":1,"block":0}`, `r.jsonl:1: text: missing`},
		{`{"v":1,"block":0,"text":"a","line":3}`, `a block line has only v, block and text`},
		{`{"v":1,"block":0,"text":"a"}` + "\n" + `{"v":1,"line":1,"turn":0,"block_messages":[{"role":"user","content":[true]}]}`,
			`r.jsonl:2: block_messages[0].content[0]: not a block number`},
		{`{"v":1,"line":1,"turn":0,"block_messages":[{"role":"user","content":["x"],"name":"n"}]}`, `unknown member "name"`},
	} {
		d := NewDecoder(strings.NewReader(c.in+"\n"), "r.jsonl")
		var rec Record
		var err error
		for err == nil {
			err = d.Next(&rec)
		}
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.in, err, c.want)
		}
	}
}
