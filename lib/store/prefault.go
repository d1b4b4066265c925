package store

import (
	"fmt"
	"os"
	"runtime/debug"
	"sync/atomic"
)

// touchSink keeps the compiler from dropping the page walk: the sum of the
// bytes read is stored where the compiler must assume someone reads it.
var touchSink atomic.Uint32

// touch reads one byte of every page of b so that each is mapped. A fault
// (the file shrank under the mapping) is returned as an error.
func touch(b []byte) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("store: prefault: %v", r)
		}
	}()
	page := os.Getpagesize()
	var x byte
	for i := 0; i < len(b); i += page {
		x += b[i]
	}
	if len(b) > 0 {
		x += b[len(b)-1]
	}
	touchSink.Store(uint32(x))
	return nil
}
