package result

import (
	"reflect"
	"strings"
	"testing"
)

func sampleHTTP() *HTTP {
	return &HTTP{Reused: false, BlockedNS: 410, DNSNS: 7, ConnectingNS: 120000, TLSNS: 90000, SendingNS: 5120,
		WaitingNS: 80213, ReceivingNS: 1203011, DataSent: 1534, DataReceived: 20482, ChunksSent: 1, ChunksReceived: 33,
		BodySent: 1290, BodyReceived: 19110, BodyChunksReceived: 32, BodyWaitingNS: 30114520, BodyReceivingNS: 1173101}
}

func TestHTTPField(t *testing.T) {
	r := Record{SentNS: 10, EndNS: 20, HTTP: sampleHTTP()}
	line := string(Append(nil, &r))
	want := `,"http":{"reused":false,"blocked_ns":410,"dns_lookup_ns":7,"connecting_ns":120000,"tls_handshaking_ns":90000,` +
		`"sending_ns":5120,"waiting_ns":80213,"receiving_ns":1203011,"data_sent":1534,"data_received":20482,` +
		`"chunks_sent":1,"chunks_received":33,"body_sent":1290,"body_received":19110,"body_chunks_received":32,` +
		`"body_waiting_ns":30114520,"body_receiving_ns":1173101}}` + "\n"
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
	// aiperf's start is before the connection's overhead.
	if got.StartNS() != 10-410-7-120000 {
		t.Errorf("StartNS %d, want SentNS less blocked, dns and connecting", got.StartNS())
	}
	if r := (Record{SentNS: 10}); r.StartNS() != 10 {
		t.Errorf("StartNS without http: %d", r.StartNS())
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
