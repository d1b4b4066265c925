package trace

import (
	"bytes"
	"io"
	"os"
	"testing"
)

// BenchmarkMooncake decodes the real Mooncake sample from memory.
func BenchmarkMooncake(b *testing.B) {
	data, err := os.ReadFile("testdata/mooncake_head1000.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(data), "m", Options{Type: TypeMooncake})
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := r.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
}
