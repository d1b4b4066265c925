package replay

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

// ListModels asks the target alone (a redirect is not followed), at the
// path a base URL ending in /v1 gives, with the run's API key.
func TestListModels(t *testing.T) {
	var auth, path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth, path = r.Header.Get("Authorization"), r.URL.Path
		if r.URL.Path == "/elsewhere/v1/models" {
			http.Redirect(w, r, "http://192.0.2.1/v1/models", http.StatusFound)
			return
		}
		w.Write([]byte(`{"object":"list","data":[{"id":"a"},{"id":"b"}]}`))
	}))
	defer srv.Close()
	got, err := ListModels(context.Background(), Options{URL: srv.URL + "/v1", APIKey: "k"})
	if err != nil || !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("got %v, %v; want [a b]", got, err)
	}
	if auth != "Bearer k" || path != "/v1/models" {
		t.Errorf("asked %s with %q", path, auth)
	}
	if got, err := ListModels(context.Background(), Options{URL: srv.URL + "/elsewhere"}); err == nil {
		t.Errorf("a redirect was followed: %v", got)
	}
}
