package hashcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/digest"
)

// checkAll runs -c on each list (stdin when there is none) and returns
// the worst outcome.
func (r *digestRun) checkAll(ctx context.Context, lists []string) error {
	if len(lists) == 0 {
		lists = []string{"-"}
	}
	var worst error
	for _, l := range lists {
		err := r.check(ctx, l)
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		if base.Code(err) > base.Code(worst) {
			worst = err
		}
		if e := (*base.Error)(nil); errors.As(err, &e) && e.Err != nil {
			r.warnf("%v", e.Err) // printed here so that later lists still run
			worst = &base.Error{Code: e.Code}
		}
	}
	return worst
}

// check runs -c on the list at name.
func (r *digestRun) check(ctx context.Context, name string) error {
	var in io.Reader = r.stdin
	listName := "standard input"
	if name != "-" {
		f, err := openList(name)
		if err != nil {
			return &base.Error{Code: base.ExitTrouble, Err: pathMessage(err)}
		}
		defer f.Close()
		in, listName = f, name
	}
	res, err := r.h.Check(ctx, in, digest.CheckOptions{
		FromStdin:     name == "-",
		Stdin:         r.stdin,
		IgnoreMissing: r.o.ignore,
		OnMalformed: func(line int, err error) {
			if r.o.warn {
				r.warnf("%s: %d: %v", listName, line, err)
			}
		},
		OnFile: r.checked,
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	if err != nil {
		return &base.Error{Code: base.ExitTrouble, Err: fmt.Errorf("%s: %w", listName, err)}
	}
	return r.verdict(listName, res)
}

// checked prints the line of -c for one listed file.
func (r *digestRun) checked(e digest.ListEntry, ok bool, err error) {
	if r.o.status {
		return
	}
	if err != nil {
		r.warnf("%v", pathMessage(err))
		r.print(digest.CheckName(e.Name) + ": FAILED open or read\n")
		return
	}
	if ok && r.o.quiet {
		return
	}
	verdict := "OK"
	if !ok {
		verdict = "FAILED"
	}
	r.print(digest.CheckName(e.Name) + ": " + verdict + "\n")
}

// verdict warns about what -c found in one list and returns its exit
// status.
func (r *digestRun) verdict(listName string, res digest.CheckResult) error {
	malformed, unreadable, mismatched, verified := res.Malformed, res.Unreadable, res.Mismatched, res.Verified
	if !r.o.status {
		if malformed > 0 {
			r.warnf("WARNING: %s improperly formatted", plural(malformed, "line is", "lines are"))
		}
		if unreadable > 0 {
			r.warnf("WARNING: %s could not be read", plural(unreadable, "listed file", "listed files"))
		}
		if mismatched > 0 {
			r.warnf("WARNING: %s did NOT match", plural(mismatched, "computed checksum", "computed checksums"))
		}
	}
	switch {
	case unreadable > 0 || (r.o.strict && malformed > 0):
		return &base.Error{Code: base.ExitTrouble}
	case mismatched > 0:
		return &base.Error{Code: base.ExitNo}
	case verified == 0 && r.o.ignore:
		if !r.o.status {
			r.warnf("%s: no file was verified", listName)
		}
		return &base.Error{Code: base.ExitNo}
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// openList opens a checksum list. Any readable file will do, a FIFO too
// (sha256sum -c <(...) is common).
func openList(name string) (*os.File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	return f, nil
}
