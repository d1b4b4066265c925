package result

import (
	"bytes"
	"io"
	"testing"
)

// BenchmarkDecode reads a records file of the sample lines, each with 64
// chunk offsets (a short streamed answer), through a Decoder.
func BenchmarkDecode(b *testing.B) {
	var buf []byte
	for i := 0; i < 1000; i++ {
		for _, r := range sample() {
			r.Record = i
			offs := make([]int64, 64)
			for j := range offs {
				offs[j] = int64(j) * 25_000_000
			}
			r.ChunkOffsetsNS = offs
			buf = Append(buf, &r)
		}
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	var rec Record
	for b.Loop() {
		d := NewDecoder(bytes.NewReader(buf), "bench.jsonl")
		for {
			err := d.Next(&rec)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}
