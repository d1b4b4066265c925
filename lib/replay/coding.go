package replay

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
)

// The client asks for the identity coding (Accept-Encoding: identity,
// unless -H sets Accept-Encoding): compressing a stream costs the server
// CPU and lets a proxy hold events back to fill its blocks. A response
// that is compressed anyway (a server or proxy that ignores the header, or
// a user who asked for it) is decoded when its codings are gzip or deflate,
// the ones the standard library reads; any other coding fails the request
// with ContentEncodingError, as do compressed bytes that do not decode.
// Decoded bytes are timed by the read that brought the compressed bytes
// they came from: a server that flushes its compressor after each event
// (as it must for the events to arrive one by one) gets each event's time.

// encodingError is a body whose content coding cannot be decoded.
type encodingError struct{ msg string }

func (e *encodingError) Error() string { return e.msg }

// readCoded reads a body with content codings, decoding it into
// rs.onBody. It returns what readBody returns.
func (rs *reqState) readCoded(h *head) (clean bool, err error) {
	if h.coding != "" {
		return false, &encodingError{"Content-Encoding " + h.coding + " is not decoded (gzip and deflate are; the client asks for identity)"}
	}
	b := newBodyReader(&rs.rr, h)
	var r io.Reader = &b
	// The last coding applied is the first to undo.
	for i := h.ncodings - 1; i >= 0; i-- {
		switch h.codings[i] {
		case codingGzip:
			zr, err := gzip.NewReader(r)
			if err != nil {
				return false, codingErr("gzip", err)
			}
			r = zr
		case codingDeflate:
			// "deflate" is the zlib format (RFC 9110 §8.4.1.2), but some
			// servers send raw deflate: the zlib header tells them apart.
			br := bufio.NewReader(r)
			hdr, err := br.Peek(2)
			if err != nil && len(hdr) < 2 {
				return false, codingErr("deflate", err)
			}
			if hdr[0]&0x0f == 8 && (uint16(hdr[0])<<8|uint16(hdr[1]))%31 == 0 {
				zr, err := zlib.NewReader(br)
				if err != nil {
					return false, codingErr("deflate", err)
				}
				r = zr
			} else {
				r = flate.NewReader(br)
			}
		}
	}
	if rs.coded == nil {
		rs.coded = make([]byte, 32<<10)
	}
	for {
		n, err := r.Read(rs.coded)
		if n > 0 {
			if err := rs.onBody(rs.coded[:n], b.t); err != nil {
				return false, err
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, codingErr("the", err)
		}
		if rs.mode == modeError && len(rs.body) >= maxErrorBody {
			return false, nil // the message is read; the connection is dropped
		}
	}
	// Bytes after the compressed data are ignored; the framing is read to
	// its end so that the connection can be reused.
	for {
		if err := b.next(); err != nil {
			if err == io.EOF {
				return b.clean, nil
			}
			return false, err
		}
	}
}

// codingErr returns a connection's error as it is, and any other as an
// encodingError.
func codingErr(coding string, err error) error {
	var ce *connError
	if errors.As(err, &ce) {
		return ce.err
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return &encodingError{coding + " data ends before its end"}
	}
	return &encodingError{"cannot decode " + coding + " data: " + err.Error()}
}
