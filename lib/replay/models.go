package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Bounds of ListModels: one GET of a small document, so that naming the
// served models after a failed run never holds the run's exit for long.
const (
	ModelsTimeout  = 5 * time.Second
	maxModelsBody  = 1 << 20
	maxModelsNamed = 50
)

// ListModels asks the server o.URL names which models it serves: GET
// /v1/models joined to o.URL as the requests' path is (a base URL ending
// in /v1 takes /models), with o's headers and API key, through the
// requests' proxy (or unix socket), no redirect followed (only the target is asked), within ModelsTimeout. It
// returns the ids of an OpenAI-style list ({"data":[{"id":...}]}), at most
// maxModelsNamed of them, in the server's order.
func ListModels(ctx context.Context, o Options) ([]string, error) {
	ep, err := parseEndpoint(o.URL, "/v1/models", o.Insecure)
	if err != nil {
		return nil, err
	}
	scheme := "http"
	if ep.tls != nil {
		scheme = "https"
	}
	ctx, cancel := context.WithTimeout(ctx, ModelsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+ep.host+ep.path, nil)
	if err != nil {
		return nil, err
	}
	for _, h := range o.Headers {
		req.Header.Set(h.Name, h.Value)
	}
	if o.APIKey != "" && req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
		req.Header.Set("x-api-key", o.APIKey) // Anthropic's name for it
	}
	tr := &http.Transport{TLSClientConfig: ep.tls}
	if ep.proxy != nil {
		tr.Proxy = http.ProxyURL(ep.proxy)
	}
	if ep.unix {
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", ep.addr)
		}
	}
	client := &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", ep.path, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxModelsBody+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxModelsBody {
		return nil, fmt.Errorf("GET %s: the answer is over %d bytes", ep.path, maxModelsBody)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("GET %s: not a model list: %v", ep.path, err)
	}
	var ids []string
	for _, m := range list.Data {
		if m.ID != "" && len(ids) < maxModelsNamed {
			ids = append(ids, m.ID)
		}
	}
	return ids, nil
}
