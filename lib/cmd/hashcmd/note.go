package hashcmd

import (
	"strings"

	"github.com/aiperf/toolkit/lib/cachedir"
	"github.com/aiperf/toolkit/lib/cachekey"
)

// leaveNote writes the note of the key of text (lib/cachekey.Note: the
// description and the inputs' names) into the cache root the flags name,
// so that aiperf-cache populate and ensure check a build against what the
// key describes without being given --explain. --no-memo leaves the root
// alone: no memo, no note. A root that cannot be written is no error of
// key's: -v says why there is no note.
func (r *digestRun) leaveNote(o *memoOptions, text string, inputs []string, verbose bool) {
	dir, noMemo := o.dir, o.noMemo
	if g := o.global; g != nil {
		noMemo = noMemo || g.noMemo
		if dir == "" {
			dir = g.dir
		}
	}
	if noMemo {
		return
	}
	err := writeNote(dir, text, inputs)
	if err != nil && verbose {
		r.warnf("no key note left for aiperf-cache: %v", err)
	}
}

func writeNote(dir, text string, inputs []string) error {
	root, err := cachedir.Resolve(dir)
	if err != nil {
		return err
	}
	shared, err := cachedir.Create(root, false)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(inputs))
	for _, in := range inputs {
		if in == "-" {
			in = "<stdin>"
		}
		if cachekey.CheckInputName(in) == nil {
			names = append(names, in)
		}
	}
	n := cachekey.NewNote(text, names)
	b, err := n.Encode()
	if err != nil {
		return err
	}
	return cachedir.WriteNote(root, shared, strings.TrimPrefix(n.Key, "sha256:"), b)
}
