package result

import (
	"reflect"
	"strings"
	"testing"
)

func sampleHTTP() *HTTP {
	return &HTTP{Reused: false, BlockedNS: 410, DNSNS: 7, ConnectingNS: 120000, TLSNS: 90000, SendingNS: 5120,
		WaitingNS: 80213, ReceivingNS: 1203011, DataSent: 1534, DataReceived: 20482, ChunksSent: 1, ChunksReceived: 33}
}

func TestHTTPField(t *testing.T) {
	r := Record{SentNS: 10, EndNS: 20, HTTP: sampleHTTP()}
	line := string(Append(nil, &r))
	want := `,"http":{"reused":false,"blocked_ns":410,"dns_lookup_ns":7,"connecting_ns":120000,"tls_handshaking_ns":90000,` +
		`"sending_ns":5120,"waiting_ns":80213,"receiving_ns":1203011,"data_sent":1534,"data_received":20482,` +
		`"chunks_sent":1,"chunks_received":33}}` + "\n"
	if !strings.HasSuffix(line, want) {
		t.Fatalf("got  %s\nwant suffix %s", line, want)
	}
	var got Record
	if err := Parse([]byte(strings.TrimSpace(line)), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.HTTP, r.HTTP) {
		t.Fatalf("round trip: %+v, want %+v", got.HTTP, r.HTTP)
	}
	// Lines written before the field, or with null, carry none.
	for _, in := range []string{`{"v":1,"sent_unix_ns":10}`, `{"v":1,"http":null}`} {
		var old Record
		if err := Parse([]byte(in), &old); err != nil || old.HTTP != nil {
			t.Fatalf("%s: %+v, %v", in, old.HTTP, err)
		}
	}
	// Unknown keys inside are ignored; reused alone is a valid object.
	var one Record
	if err := Parse([]byte(`{"v":1,"http":{"reused":true,"future_ns":3}}`), &one); err != nil || !one.HTTP.Reused {
		t.Fatalf("%+v, %v", one.HTTP, err)
	}
}

func TestHTTPErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"v":1,"http":3}`, `http: not an object`},
		{`{"v":1,"http":{"reused":1}}`, `http.reused: not a boolean`},
		{`{"v":1,"http":{"waiting_ns":-1}}`, `http.waiting_ns`},
		{`{"v":1,"http":{"sending_ns":"x"}}`, `http.sending_ns`},
	} {
		var r Record
		err := Parse([]byte(tc.in), &r)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.in, err, tc.want)
		}
	}
}
