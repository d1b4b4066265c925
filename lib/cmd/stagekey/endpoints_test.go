package stagekey

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/aiperf/toolkit/lib/request"
)

// TestEndpointKeys: every endpoint type is a field of the key, so each
// gives its own key (the golden pair in lib/cmd/hashcmd holds the ones of
// chat and completions unchanged).
func TestEndpointKeys(t *testing.T) {
	seen := map[string]string{}
	tmpl := filepath.Join(t.TempDir(), "t.json")
	if err := os.WriteFile(tmpl, []byte(`{"p": {{ text|tojson }}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, e := range request.Endpoints {
		var p Pack
		p.Request = request.Options{Endpoint: e, Model: "m"}
		if e == request.Template {
			p.TemplateFile = tmpl
		}
		o, err := p.Check()
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		var desc string
		for _, f := range p.Fields(o) {
			desc += f.Name + "=" + f.Value + ";"
		}
		if other, dup := seen[desc]; dup {
			t.Errorf("%s and %s describe alike: %s", e, other, desc)
		}
		seen[desc] = e
	}
}
