//go:build !linux

package synth

// region is the portable fallback of the Linux region: a heap slice,
// copied when it grows.
type region struct{ b []byte }

func (r *region) resize(n int) error {
	b := make([]byte, n)
	copy(b, r.b)
	r.b = b
	return nil
}

func (r *region) free() { r.b = nil }
