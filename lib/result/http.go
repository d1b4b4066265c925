package result

import (
	"math"
	"strconv"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// HTTP is how one request used its connection, phase by phase. The
// replayer owns its sockets, so each phase is timed where it happens, on
// the clock of the record's other times ("http", omitted when the writer
// did not time the phases; records written before it have none).
//
//	"http":{"reused":true,"blocked_ns":410,"dns_lookup_ns":0,"connecting_ns":0,
//	 "tls_handshaking_ns":0,"sending_ns":5120,"waiting_ns":80213,"receiving_ns":1203011,
//	 "data_sent":1534,"data_received":20482,"chunks_sent":1,"chunks_received":33,
//	 "body_sent":1290,"body_received":19110,"body_chunks_received":32,
//	 "body_waiting_ns":30114520,"body_receiving_ns":1173101}
//
// Two views of the exchange: the connection's (sending_ns to
// chunks_received: the HTTP/1.1 bytes as written and read, heads and
// chunk framing included, timed from the moment the request had its
// connection) and the bodies' (body_*: what the Python aiperf's aiohttp
// trace sees, the request body and the response body as delivered, after
// de-chunking and decoding). lib/metrics derives aiperf's http_req_* from
// both, and its http_wire_* from the first (see lib/metrics/httptrace.go).
// A request that failed before a phase leaves that phase and every later
// one at 0; records written before the body_* members have none of them
// (BodyChunksReceived 0).
type HTTP struct {
	// Reused: the request went on a keep-alive connection that an earlier
	// request opened ("reused"); its dns, connecting and tls times are 0.
	Reused bool
	// BlockedNS is the wait for a connection from the pool, up to the
	// moment a dial (if any) started ("blocked_ns").
	BlockedNS int64
	// DNSNS is the host name's resolution; 0 for an address ("dns_lookup_ns").
	DNSNS int64
	// ConnectingNS is the TCP connect plus, on https, the TLS handshake,
	// as aiperf's http_req_connecting counts it ("connecting_ns").
	ConnectingNS int64
	// TLSNS is the TLS handshake alone, k6's http_req_tls_handshaking
	// ("tls_handshaking_ns").
	TLSNS int64
	// SendingNS: from SentNS to the last byte of the request written
	// ("sending_ns").
	SendingNS int64
	// WaitingNS: from the end of sending to the first byte of the response,
	// time to first byte ("waiting_ns").
	WaitingNS int64
	// ReceivingNS: from the first byte to the last byte of the response
	// ("receiving_ns").
	ReceivingNS int64
	// DataSent and DataReceived are the bytes written and read, head and
	// body ("data_sent", "data_received"); ChunksSent and ChunksReceived
	// the writes and the reads that returned bytes ("chunks_sent",
	// "chunks_received").
	DataSent, DataReceived     int64
	ChunksSent, ChunksReceived int64

	// BodySent is the request body's length ("body_sent"). BodyReceived is
	// the response body as delivered: de-chunked and decoded
	// ("body_received"). BodyChunksReceived counts its deliveries: the
	// reads that brought body bytes of a streamed answer, 1 for any other
	// answer, which aiohttp hands over whole ("body_chunks_received").
	BodySent, BodyReceived, BodyChunksReceived int64
	// BodyWaitingNS: from the end of sending to the first body delivery,
	// for an answer that is not streamed the whole body's
	// ("body_waiting_ns"). BodyReceivingNS: from the first body delivery
	// to the last ("body_receiving_ns").
	BodyWaitingNS, BodyReceivingNS int64
}

// StartNS is when the request began as the Python aiperf times its
// requests (its start_perf_ns, and its aiohttp trace's request start):
// before the connection was taken from the pool or dialled, so that its
// latencies hold the dial. It is SentNS less the record's blocked,
// dns_lookup and connecting times; SentNS for a record without them.
func (r *Record) StartNS() int64 {
	if h := r.HTTP; h != nil {
		return r.SentNS - h.BlockedNS - h.DNSNS - h.ConnectingNS
	}
	return r.SentNS
}

func appendHTTP(dst []byte, h *HTTP) []byte {
	dst = append(dst, `,"http":{"reused":`...)
	dst = strconv.AppendBool(dst, h.Reused)
	for _, f := range httpFields(h) {
		dst = append(dst, ',', '"')
		dst = append(dst, f.key...)
		dst = append(dst, '"', ':')
		dst = strconv.AppendInt(dst, *f.v, 10)
	}
	return append(dst, '}')
}

type httpField struct {
	key string
	v   *int64
}

func httpFields(h *HTTP) [16]httpField {
	return [16]httpField{
		{"blocked_ns", &h.BlockedNS}, {"dns_lookup_ns", &h.DNSNS}, {"connecting_ns", &h.ConnectingNS},
		{"tls_handshaking_ns", &h.TLSNS}, {"sending_ns", &h.SendingNS}, {"waiting_ns", &h.WaitingNS},
		{"receiving_ns", &h.ReceivingNS}, {"data_sent", &h.DataSent}, {"data_received", &h.DataReceived},
		{"chunks_sent", &h.ChunksSent}, {"chunks_received", &h.ChunksReceived},
		{"body_sent", &h.BodySent}, {"body_received", &h.BodyReceived}, {"body_chunks_received", &h.BodyChunksReceived},
		{"body_waiting_ns", &h.BodyWaitingNS}, {"body_receiving_ns", &h.BodyReceivingNS},
	}
}

func parseHTTP(v []byte) (*HTTP, error) {
	if v[0] != '{' {
		return nil, fieldErr("http", "not an object")
	}
	h := &HTTP{}
	fields := httpFields(h)
	_, err := jsonx.Fields(v, 0, func(key, v []byte, _ int) error {
		k := string(key[1 : len(key)-1])
		if k == "reused" {
			switch string(v) {
			case "true":
				h.Reused = true
			case "false":
			default:
				return fieldErr("http.reused", "not a boolean: %s", clip(v))
			}
			return nil
		}
		for _, f := range fields {
			if f.key == k {
				x, err := parseInt("http."+k, v, 0, math.MaxInt64)
				*f.v = x
				return err
			}
		}
		return nil
	})
	return h, err
}
