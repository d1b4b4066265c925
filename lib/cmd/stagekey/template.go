package stagekey

import (
	"errors"
	"fmt"
	"io"

	"github.com/aiperf/toolkit/lib/bodytemplate"
	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/internal/filekind"
	"github.com/aiperf/toolkit/lib/request"
)

// readTemplate reads and parses --template into o.Template: aiperf-pack
// renders with it, aiperf-hash keys its digest, and both refuse a bad one
// in the same words (exit 2, naming the file and line).
func (p *Pack) readTemplate(o *request.Options) error {
	o.Template = nil
	if p.TemplateFile == "" {
		return nil
	}
	src, err := readTemplateFile(p.TemplateFile)
	if err != nil {
		return base.UsageError("--template: %v", err)
	}
	t, err := bodytemplate.Parse(p.TemplateFile, src)
	if err != nil {
		var te *bodytemplate.Error
		if errors.As(err, &te) {
			return base.UsageError("--template %v", err)
		}
		return base.UsageError("--template %s: %v", p.TemplateFile, err)
	}
	o.Template = t
	return nil
}

// readTemplateFile reads a template whole; a named pipe or a device is
// refused at once (it would hang, or never end), as every input read whole.
func readTemplateFile(name string) ([]byte, error) {
	f, err := filekind.OpenRegular(name)
	if errors.Is(err, filekind.ErrNotRegular) {
		return nil, fmt.Errorf("%w (a template is read whole before any record)", err)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
