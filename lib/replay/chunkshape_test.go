package replay

import "testing"

// FuzzChunkShape: a chunk taken by its shape (chunkShape) gives what the
// walk gives. Each pair of chunks is read in turn twice, a then b then a
// then b, by reply.chunk and by refChunk (the reference reader, no shape):
// every result and the reply after each chunk must be the same.
func FuzzChunkShape(f *testing.F) {
	chat := func(text string) string {
		return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":` + text + `},"finish_reason":null}]}`
	}
	for _, p := range [][2]string{
		{chat(`" a"`), chat(`" b"`)},
		{chat(`" a"`), chat(`"x\"y"`)},
		{chat(`" a"`), chat(`"x\\"`)},
		{chat(`" a"`), chat(`""`)},
		{chat(`" a"`), chat(`null`)},
		{chat(`" a"`), chat(`"a"},"x":{"y":"z"`)},
		{chat(`" a"`), chat(`"a" , "content":"b"`)},
		{chat(`" a"`), chat(`"unterminated`)},
		{chat(`" a"`), chat(`"a"`) + ` x`},
		{chat(`null`), chat(`"now text"`)},
		{`{"choices":[{"text":" yes","index":0}]}`, `{"choices":[{"text":" no","index":0}]}`},
		{`{"choices":[{"delta":{"content":"a"}},{"delta":{}}]}`, `{"choices":[{"delta":{"content":"b"}},{"delta":{}}]}`},
		{`{"choices":[{"delta":{"content":"a","reasoning":"r"}}]}`, `{"choices":[{"delta":{"content":"b","reasoning":"r"}}]}`},
		{`{"choices":[{"delta":{"content":"a"}}],"usage":{"completion_tokens":1}}`, `{"choices":[{"delta":{"content":"b"}}],"usage":{"completion_tokens":1}}`},
		{`{"type":"content_block_delta","delta":{"type":"text_delta","text":"a"}}`, `{"type":"content_block_delta","delta":{"type":"text_delta","text":"b"}}`},
	} {
		f.Add([]byte(p[0]), []byte(p[1]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var got, want reply
		for i, data := range [][]byte{a, b, a, b} {
			gc, gr, gerr := got.chunk(data)
			wc, wr, werr := want.refChunk(data)
			if gc != wc || gr != wr || (gerr == nil) != (werr == nil) || !sameReply(&got, &want) {
				t.Fatalf("chunk %d %q:\ngot  %v %v %v %q %q\nwant %v %v %v %q %q", i, data, gc, gr, gerr, got.content, got.reasoning, wc, wr, werr, want.content, want.reasoning)
			}
		}
	})
}

// TestChunkShapeTaken: the chunks of one stream after the first with text
// are taken by their shape.
func TestChunkShapeTaken(t *testing.T) {
	var rp reply
	for i, text := range []string{`one`, ` two`, ` \"three\"`} {
		data := []byte(`{"id":"c","choices":[{"index":0,"delta":{"content":"` + text + `"},"finish_reason":null}]}`)
		if ok, _ := rp.shape.take(data, new([]byte)); ok != (i > 0) {
			t.Fatalf("chunk %d: taken by shape %v", i, ok)
		}
		if c, _, err := rp.chunk(data); !c || err != nil {
			t.Fatalf("chunk %d: %v %v", i, c, err)
		}
	}
	if want := `one two \"three\"`; string(rp.content) != want {
		t.Fatalf("content %q, want %q", rp.content, want)
	}
}
