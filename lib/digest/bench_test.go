package digest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	simd "github.com/minio/sha256-simd"
)

// Benchmarks read page-cached files: run with -cpu 1,2 to see what the
// read-ahead goroutine buys (scripts/bench/hash.sh measures whole runs
// against sha256sum).

func benchFile(b *testing.B, size int) string {
	name := filepath.Join(b.TempDir(), "f")
	if err := os.WriteFile(name, randBytes(size, 1), 0o644); err != nil {
		b.Fatal(err)
	}
	return name
}

func BenchmarkFile(b *testing.B) {
	const size = 256 << 20
	name := benchFile(b, size)
	for _, chunk := range []int{256 << 10, 1 << 20, 4 << 20} {
		b.Run(fmt.Sprintf("chunk=%dK", chunk>>10), func(b *testing.B) {
			h := &Hasher{ChunkSize: chunk}
			b.SetBytes(size)
			for b.Loop() {
				if _, err := h.Path(context.Background(), name); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDir(b *testing.B) {
	const files, size = 32, 8 << 20
	root := b.TempDir()
	for i := range files {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprint(i)), randBytes(size, uint64(i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, chunk := range []int{1 << 20, 4 << 20} {
		b.Run(fmt.Sprintf("chunk=%dK", chunk>>10), func(b *testing.B) {
			h := &Hasher{ChunkSize: chunk}
			b.SetBytes(files * size)
			for b.Loop() {
				if _, err := h.Path(context.Background(), root); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSHA256 compares the mandated sha256-simd with crypto/sha256 on
// bytes in memory (both use SHA-NI where the CPU has it).
func BenchmarkSHA256(b *testing.B) {
	data := randBytes(1<<20, 2)
	b.Run("sha256-simd", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			simd.Sum256(data)
		}
	})
	b.Run("crypto-sha256", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			sha256.Sum256(data)
		}
	})
}
