package store

import (
	"fmt"
	"os"
	"runtime/debug"
)

// touchSink keeps the compiler from dropping the page walk.
var touchSink byte

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
	touchSink = x
	return nil
}
