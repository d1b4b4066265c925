package replay

import (
	"bytes"
	"reflect"
	"testing"
)

// refChunk is the chunk reader as it was before it walked a chunk once:
// laxObject checks every member's whole value before a callback reads it,
// and the callbacks walk choices and delta again. FuzzChunkSinglePass
// holds reply.chunk to its results and side effects on any bytes.
func (rp *reply) refChunk(data []byte) (content, reasoning bool, err error) {
	i := laxSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false, false, errMalformed
	}
	var f textFlags
	var ev apiEvent
	end, err := laxObject(data, i, 0, func(key, v []byte) error {
		switch string(key) {
		case `"type"`, `"delta"`, `"response"`, `"message"`, `"output"`, `"content"`, `"data"`, `"text"`, `"result"`:
			rp.eventMember(key, v, &ev, &f)
		case `"choices"`:
			if v[0] != '[' {
				return nil
			}
			_, err := laxArray(v, 0, 1, func(ch []byte) error {
				if ch[0] != '{' {
					return nil
				}
				_, err := laxObject(ch, 0, 2, func(k, v []byte) error {
					switch string(k) {
					case `"delta"`, `"message"`:
						if v[0] == '{' {
							c, r := rp.refMessage(v)
							content, reasoning = content || c, reasoning || r
						}
					case `"text"`:
						if appendText(&rp.content, v) {
							content = true
						}
					}
					return nil
				})
				return err
			})
			return err
		case `"usage"`:
			if v[0] == '{' {
				rp.readUsage(v)
			}
		case `"error"`:
			rp.readError(v)
		}
		return nil
	})
	if err == nil && laxSpace(data, end) != len(data) {
		err = errMalformed
	}
	content, reasoning = content || f.content, reasoning || f.reasoning
	if err != nil {
		return content, reasoning, errMalformed
	}
	rp.apply(&ev, &f)
	return content || f.content, reasoning || f.reasoning, nil
}

func (rp *reply) refMessage(v []byte) (content, reasoning bool) {
	laxObject(v, 0, 3, func(k, v []byte) error {
		switch string(k) {
		case `"content"`:
			content = appendText(&rp.content, v) || content
		case `"reasoning_content"`, `"reasoning"`:
			reasoning = appendText(&rp.reasoning, v) || reasoning
		}
		return nil
	})
	return content, reasoning
}

// sameReply reports whether two replies hold the same text, usage and
// error (an empty text equals none).
func sameReply(a, b *reply) bool {
	return bytes.Equal(a.content, b.content) && bytes.Equal(a.reasoning, b.reasoning) && a.usage == b.usage &&
		a.hasUsage == b.hasUsage && a.done == b.done && reflect.DeepEqual(a.srvErr, b.srvErr)
}

// FuzzChunkSinglePass: on any bytes, fed after a chunk that left text in
// the reply, reply.chunk returns what refChunk returns and leaves the reply
// as refChunk leaves it, malformed chunks included.
func FuzzChunkSinglePass(f *testing.F) {
	for _, s := range []string{
		`{"id":"x","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}`,
		`{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}, x]}`,
		`{"choices":[{"delta":{"content":"a","reasoning":"r"}},{"text":"b"}],"usage":{"completion_tokens":3}, "x":}`,
		`{"choices":[{"text":" yes","index":0}],"usage":{"prompt_tokens":3,"completion_tokens":0,"total_tokens":3}}`,
		`{"error":{"message":"bad","type":"invalid_request_error","code":400},"choices":[{"delta":{"content":"z"}}]`,
		`{"choices":[{"message":{"role":"assistant","content":"whole"}}]} x`,
		`{"choices":[{"delta":{"content":"a\\"}}], "x": [1, 2.5e3, true, false, null, {"y": "\u00e9"}]}`,
		`{"choices":[{"delta":{"content":"deep","x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}]}`,
		`{"choices":{"delta":{"content":"not an array"}},"choices":[{"delta":"x"},1,"s",{"delta":{"content":"ok"}}]}`,
		`not json`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		prime := []byte(`{"choices":[{"delta":{"content":"before","reasoning_content":"r"}}]}`)
		var got, want reply
		got.chunk(prime)
		want.refChunk(prime)
		gc, gr, gerr := got.chunk(data)
		wc, wr, werr := want.refChunk(data)
		if gc != wc || gr != wr || (gerr == nil) != (werr == nil) || !sameReply(&got, &want) {
			t.Fatalf("%q:\ngot  %v %v %v %+v\nwant %v %v %v %+v", data, gc, gr, gerr, got, wc, wr, werr, want)
		}
	})
}
