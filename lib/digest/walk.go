package digest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// maxDepth bounds the nesting of directories (symlinked ones included) that
// a walk follows, so a crafted tree of links cannot make it run forever.
const maxDepth = 256

// walker lists the files of a tree for the directory rule (see [Hasher.Dir]
// for the policy).
type walker struct {
	root    string // as the caller spelled it, for messages
	real    string // absolute, symlinks resolved
	members []source
}

// walk returns the files below root in the order of the directory rule
// (see pathLess), each with the path to open (symlinks resolved) and the
// identity seen by its stat.
func walk(root string) ([]source, error) {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	if real, err = filepath.Abs(real); err != nil {
		return nil, err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: root, Err: unwrapPath(err)}
	}
	w := &walker{root: root, real: real}
	if err := w.visit(real, "", []fs.FileInfo{fi}); err != nil {
		return nil, err
	}
	sort.Slice(w.members, func(i, j int) bool { return pathLess(w.members[i].name, w.members[j].name) })
	return w.members, nil
}

// pathLess orders relative paths component by component, each name by its
// bytes: "a/b" before "a-c" before "a.d/e" ('-' and '.' sort below '/' as
// bytes, but "a" is a prefix of "a-c"). That is the order of Python's
// sorted(root.rglob("*")), which the Python aiperf hashes a directory in,
// and the order of a depth-first walk that lists each directory sorted. Since
// a name holds neither '/' nor NUL, it is byte order with '/' taken as the
// smallest byte.
func pathLess(a, b string) bool {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x == '/' {
			return true
		}
		if y == '/' {
			return false
		}
		return x < y
	}
	return len(a) < len(b)
}

// display names a member the way the user reaches it: root joined with its
// relative path.
func (w *walker) display(rel string) string {
	if rel == "" {
		return w.root
	}
	return filepath.Join(w.root, filepath.FromSlash(rel))
}

// visit lists the directory at the real path dir, reached as rel; stack holds
// the directories being walked, outermost first, for loop detection.
func (w *walker) visit(dir, rel string, stack []fs.FileInfo) error {
	if len(stack) > maxDepth {
		return &fs.PathError{Op: "walk", Path: w.display(rel), Err: fmt.Errorf("more than %d nested directories", maxDepth)}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return &fs.PathError{Op: "read directory", Path: w.display(rel), Err: unwrapPath(err)}
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		r := e.Name()
		if rel != "" {
			r = rel + "/" + e.Name()
		}
		t := e.Type()
		switch {
		case t.IsRegular():
			fi, err := e.Info()
			if err != nil {
				return &fs.PathError{Op: "stat", Path: w.display(r), Err: unwrapPath(err)}
			}
			w.add(r, p, fi)
		case t.IsDir():
			fi, err := e.Info()
			if err != nil {
				return &fs.PathError{Op: "stat", Path: w.display(r), Err: unwrapPath(err)}
			}
			if enclosing(stack, fi) {
				// Only a bind mount can make a real directory its own ancestor.
				return &fs.PathError{Op: "walk", Path: w.display(r), Err: fmt.Errorf("%w: it is an enclosing directory mounted again", ErrLoop)}
			}
			if err := w.visit(p, r, append(stack, fi)); err != nil {
				return err
			}
		case t&fs.ModeSymlink != 0:
			if err := w.link(p, r, stack); err != nil {
				return err
			}
		default:
			return &fs.PathError{Op: "digest", Path: w.display(r), Err: special(t)}
		}
	}
	return nil
}

// link follows the symlink at p (reached as rel) when it resolves inside
// the tree.
func (w *walker) link(p, rel string, stack []fs.FileInfo) error {
	disp := w.display(rel)
	fi, err := os.Stat(p)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return &fs.PathError{Op: "digest", Path: disp, Err: danglingErr(p)}
		case errors.Is(err, syscall.ELOOP):
			return &fs.PathError{Op: "digest", Path: disp, Err: fmt.Errorf("%w: too many levels of symbolic links", ErrLoop)}
		}
		return &fs.PathError{Op: "stat", Path: disp, Err: unwrapPath(err)}
	}
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return &fs.PathError{Op: "digest", Path: disp, Err: unwrapPath(err)}
	}
	if target, err = filepath.Abs(target); err != nil {
		return &fs.PathError{Op: "digest", Path: disp, Err: err}
	}
	if !w.inside(target) {
		return &fs.PathError{Op: "digest", Path: disp, Err: fmt.Errorf("%w (to %s)", ErrOutside, target)}
	}
	switch {
	case fi.Mode().IsRegular():
		w.add(rel, target, fi)
	case fi.IsDir():
		if enclosing(stack, fi) {
			return &fs.PathError{Op: "digest", Path: disp, Err: fmt.Errorf("%w: it points to the enclosing directory %s", ErrLoop, w.display(w.relOf(target)))}
		}
		return w.visit(target, rel, append(stack, fi))
	default:
		return &fs.PathError{Op: "digest", Path: disp, Err: special(fi.Mode())}
	}
	return nil
}

func (w *walker) add(rel, open string, fi fs.FileInfo) {
	id, ok := statID(fi)
	w.members = append(w.members, source{name: rel, open: open, disp: w.display(rel), nofollow: true, id: id, idOK: ok, size: fi.Size()})
}

func (w *walker) inside(target string) bool {
	if w.real == string(filepath.Separator) {
		return true
	}
	return target == w.real || strings.HasPrefix(target, w.real+string(filepath.Separator))
}

// relOf returns the relative path of a real path inside the tree.
func (w *walker) relOf(target string) string {
	r, err := filepath.Rel(w.real, target)
	if err != nil || r == "." {
		return ""
	}
	return filepath.ToSlash(r)
}

func enclosing(stack []fs.FileInfo, fi fs.FileInfo) bool {
	for _, s := range stack {
		if os.SameFile(s, fi) {
			return true
		}
	}
	return false
}

func danglingErr(p string) error {
	if t, err := os.Readlink(p); err == nil {
		return fmt.Errorf("%w (to %s)", ErrDangling, t)
	}
	return ErrDangling
}

// unwrapPath strips an *fs.PathError (whose path is the resolved one) so the
// caller can name the path the user knows.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
