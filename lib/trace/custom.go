package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/aiperf/toolkit/lib/jsonx"
)

// customDecoder streams aiperf's custom JSONL datasets: single_turn (one
// turn per line) and multi_turn (one conversation per line, {"session_id",
// "turns": [...]}).
type customDecoder struct {
	name    string
	lr      *lineReader
	multi   bool
	seq     int64
	turns   map[string]int // session id → turns seen so far
	pending []*Row         // rest of the current multi_turn line
}

func newCustomDecoder(name string, lr *lineReader, multi bool) *customDecoder {
	return &customDecoder{name: name, lr: lr, multi: multi, turns: make(map[string]int)}
}

func (d *customDecoder) next() (*Row, error) {
	if len(d.pending) > 0 {
		row := d.pending[0]
		d.pending = d.pending[1:]
		return row, nil
	}
	rec, line, err := d.lr.Record()
	if err != nil {
		return nil, ioError(d.name, line, err)
	}
	if err := checkObject(rec); err != nil {
		return nil, at(d.name, line, err)
	}
	if !d.multi {
		row, fe := parseTurn("", rec)
		if fe != nil {
			return nil, at(d.name, line, fe)
		}
		d.place(row, line)
		if row.SessionID != "" && !row.SessionGenerated {
			// The Python aiperf sends a single_turn session's entries one
			// after another, each as it is, without history: as stored,
			// which is what this mode tells replay (no splicing).
			row.ContextMode = ContextMessageArray
		}
		return row, nil
	}
	rows, fe := d.parseMulti(rec, line)
	if fe != nil {
		return nil, at(d.name, line, fe)
	}
	d.pending = rows[1:]
	return rows[0], nil
}

// place sets the row's position and its turn within its session.
func (d *customDecoder) place(row *Row, line int64) {
	row.Source, row.Line, row.Seq = d.name, line, d.seq
	d.seq++
	if row.SessionID != "" && !row.SessionGenerated {
		row.Turn = d.turns[row.SessionID]
		d.turns[row.SessionID]++
	}
}

func (d *customDecoder) parseMulti(rec []byte, line int64) ([]*Row, *fieldError) {
	var sid, turns []byte
	_ = members(rec, func(k string, v []byte, _ int) error {
		switch k {
		case "session_id":
			sid = v
		case "turns":
			turns = v
		}
		return nil
	})
	sessionID := ""
	if !isNull(sid) {
		s, fe := stringValue("session_id", sid)
		if fe != nil {
			return nil, fe
		}
		sessionID = s
	}
	if turns == nil {
		return nil, ferr("turns", "required")
	}
	if kind(turns) != kindArray {
		return nil, wrongKind("turns", "an array of turn objects", turns)
	}
	generated := sessionID == ""
	if generated {
		sessionID = fmt.Sprintf("%s:%d", filepath.Base(d.name), line)
	}
	var rows []*Row
	var fe *fieldError
	_ = elements(turns, func(i int, t []byte, _ int) error {
		field := fmt.Sprintf("turns[%d]", i)
		if kind(t) != kindObject {
			fe = wrongKind(field, "an object", t)
			return fe
		}
		row, err := parseTurn(field, t)
		if err != nil {
			fe = err
			return fe
		}
		// The line's session id wins over a turn's own session_id.
		row.SessionID, row.SessionGenerated = sessionID, generated
		rows = append(rows, row)
		return nil
	})
	if fe != nil {
		return nil, fe
	}
	if len(rows) == 0 {
		return nil, ferr("turns", "must hold at least one turn")
	}
	for i, row := range rows {
		d.place(row, line)
		if generated {
			row.Turn = i
		}
	}
	return rows, nil
}

// media is one Text/Image/Audio/Video object: a name and its contents.
type media struct {
	contents []string
	uuids    []string // images only
}

// turnFields holds the raw fields of a single_turn object.
type turnFields struct {
	text, texts, image, images, audio, audios, video, videos []byte
	imageUUIDs, timestamp, delay, role, sessionID            []byte
	outputLength, extra                                      []byte
}

// parseTurn validates one single_turn object (aiperf's SingleTurn model) and
// builds its row; prefix is the JSON path of the object for errors.
func parseTurn(prefix string, obj []byte) (*Row, *fieldError) {
	var f turnFields
	_ = members(obj, func(k string, v []byte, _ int) error {
		if isNull(v) {
			v = nil
		}
		switch k {
		case "text":
			f.text = v
		case "texts":
			f.texts = v
		case "image":
			f.image = v
		case "images":
			f.images = v
		case "audio":
			f.audio = v
		case "audios":
			f.audios = v
		case "video":
			f.video = v
		case "videos":
			f.videos = v
		case "image_uuids":
			f.imageUUIDs = v
		case "timestamp":
			f.timestamp = v
		case "delay":
			f.delay = v
		case "role":
			f.role = v
		case "session_id":
			f.sessionID = v
		case "output_length":
			f.outputLength = v
		case "extra":
			f.extra = v
		}
		return nil
	})
	row, fe := buildTurn(&f)
	return row, within(prefix, fe)
}

func buildTurn(f *turnFields) (*Row, *fieldError) {
	row := new(Row)
	var fe *fieldError
	texts, fe := modality("text", f.text, f.texts, false)
	if fe != nil {
		return nil, fe
	}
	images, fe := modality("image", f.image, f.images, true)
	if fe != nil {
		return nil, fe
	}
	audios, fe := modality("audio", f.audio, f.audios, false)
	if fe != nil {
		return nil, fe
	}
	videos, fe := modality("video", f.video, f.videos, false)
	if fe != nil {
		return nil, fe
	}
	if f.imageUUIDs != nil {
		if images, fe = applyImageUUIDs(f, images); fe != nil {
			return nil, fe
		}
	}
	if len(texts)+len(images)+len(audios)+len(videos) == 0 ||
		!(truthy(f.text) || truthy(f.texts) || truthy(f.image) || truthy(f.images) ||
			truthy(f.audio) || truthy(f.audios) || truthy(f.video) || truthy(f.videos) || truthy(f.imageUUIDs)) {
		return nil, ferr("", "at least one of text, texts, image, images, audio, audios, video, videos must be provided")
	}
	if fe = timing(row, f.timestamp, f.delay, scaleMS); fe != nil {
		return nil, fe
	}
	if row.TimestampNS != 0 && row.DelayNS != 0 {
		return nil, ferr("delay", "timestamp and delay cannot be set together")
	}
	role := "user"
	if f.role != nil {
		r, fe := stringValue("role", f.role)
		if fe != nil {
			return nil, fe
		}
		if r != "" {
			role = r
		}
	}
	if f.sessionID != nil {
		if row.SessionID, fe = stringValue("session_id", f.sessionID); fe != nil {
			return nil, fe
		}
	}
	if f.outputLength != nil {
		n, fe := tokens("output_length", f.outputLength)
		if fe != nil {
			return nil, fe
		}
		if n == 0 {
			return nil, ferr("output_length", "must be greater than 0")
		}
		row.OutputLength, row.HasOutputLength = n, true
	}
	if f.extra != nil {
		if row.Extra, fe = extraObject("extra", f.extra); fe != nil {
			return nil, fe
		}
	}

	// aiperf's chat rendering: one text with one content and no media is a
	// plain string; anything else is a list of content parts, empty
	// contents skipped (and an empty list degrades to "").
	var content any
	if len(texts) == 1 && len(texts[0].contents) == 1 && len(images)+len(audios)+len(videos) == 0 {
		row.Text, row.HasText = texts[0].contents[0], true
		content = row.Text
	} else {
		var parts []any
		for _, m := range texts {
			for _, c := range m.contents {
				if c != "" {
					parts = append(parts, textPart{Type: "text", Text: c})
				}
			}
		}
		for _, m := range images {
			for i, c := range m.contents {
				if m.uuids != nil {
					parts = append(parts, imagePart{Type: "image_url", ImageURL: urlRef{c}, UUID: m.uuids[i]})
				} else if c != "" {
					parts = append(parts, imagePart{Type: "image_url", ImageURL: urlRef{c}})
				}
			}
		}
		for _, m := range audios {
			for _, c := range m.contents {
				if c != "" {
					parts = append(parts, audioPart(c))
				}
			}
		}
		for _, m := range videos {
			for _, c := range m.contents {
				if c != "" {
					parts = append(parts, videoPart{Type: "video_url", VideoURL: urlRef{c}})
				}
			}
		}
		content = ""
		if len(parts) > 0 {
			content = parts
		}
	}
	msg, err := marshalNoEscape([]message{{Role: role, Content: content}})
	if err != nil {
		return nil, ferr("", "%v", err)
	}
	row.Messages = msg
	return row, nil
}

// truthy mirrors Python truthiness for the modality checks: a non-empty
// string or list.
func truthy(v []byte) bool {
	switch kind(v) {
	case kindString:
		return len(v) > 2
	case kindArray:
		return hasAnyElement(v)
	}
	return false
}

func hasAnyElement(arr []byte) bool {
	i := jsonx.SkipSpace(arr, 1)
	return i < len(arr) && arr[i] != ']'
}

// modality reads the singular (a string) and plural (a list of strings or
// of {name, contents} objects) forms of one modality. The two are mutually
// exclusive when both are non-empty; otherwise the singular wins.
func modality(name string, single, plural []byte, isImage bool) ([]media, *fieldError) {
	pname := name + "s"
	if truthy(single) && truthy(plural) {
		return nil, ferr(pname, "%s and %s cannot be set together", name, pname)
	}
	if single != nil {
		s, fe := stringValue(name, single)
		if fe != nil {
			return nil, fe
		}
		if fe := checkMedia(name, name, s); fe != nil {
			return nil, fe
		}
		return []media{{contents: []string{s}}}, nil
	}
	if plural == nil {
		return nil, nil
	}
	if kind(plural) != kindArray {
		return nil, wrongKind(pname, "an array", plural)
	}
	var strs []string
	var objs []media
	var fe *fieldError
	_ = elements(plural, func(i int, e []byte, _ int) error {
		field := fmt.Sprintf("%s[%d]", pname, i)
		switch kind(e) {
		case kindString:
			s, _ := stringValue(field, e)
			if objs != nil {
				fe = ferr(field, "mixes strings and objects")
				return fe
			}
			if fe = checkMedia(name, field, s); fe != nil {
				return fe
			}
			strs = append(strs, s)
		case kindObject:
			if strs != nil {
				fe = ferr(field, "mixes strings and objects")
				return fe
			}
			var m media
			if m, fe = mediaObject(name, field, e, isImage); fe != nil {
				return fe
			}
			objs = append(objs, m)
		default:
			fe = wrongKind(field, "a string or an object", e)
			return fe
		}
		return nil
	})
	if fe != nil {
		return nil, fe
	}
	if strs != nil {
		return []media{{contents: strs}}, nil
	}
	return objs, nil
}

// mediaObject reads {"name": ..., "contents": [...]} (and "uuids" for images).
func mediaObject(name, field string, obj []byte, isImage bool) (media, *fieldError) {
	var m media
	var fe *fieldError
	_ = members(obj, func(k string, v []byte, _ int) error {
		switch {
		case k == "name" && !isNull(v):
			_, fe = stringValue(field+".name", v)
		case k == "contents" && !isNull(v):
			m.contents, fe = stringList(field+".contents", v)
		case k == "uuids" && isImage && !isNull(v):
			m.uuids, fe = stringList(field+".uuids", v)
		}
		if fe != nil {
			return fe
		}
		return nil
	})
	if fe != nil {
		return m, fe
	}
	if m.uuids != nil && len(m.uuids) != len(m.contents) {
		return m, ferr(field+".uuids", "length %d must match contents length %d", len(m.uuids), len(m.contents))
	}
	for i, c := range m.contents {
		if fe := checkMedia(name, fmt.Sprintf("%s.contents[%d]", field, i), c); fe != nil {
			return m, fe
		}
	}
	return m, nil
}

// applyImageUUIDs attaches image_uuids to string-form images, following
// aiperf's rules: not with the singular image, lengths must match, no empty
// ids; without images each id stands for an empty image slot.
func applyImageUUIDs(f *turnFields, images []media) ([]media, *fieldError) {
	uuids, fe := stringList("image_uuids", f.imageUUIDs)
	if fe != nil {
		return nil, fe
	}
	if f.image != nil {
		return nil, ferr("image_uuids", "cannot be used with the singular image field")
	}
	if !truthy(f.images) {
		images = []media{{contents: make([]string, len(uuids))}}
	} else if kind(firstElement(f.images)) == kindObject {
		return nil, ferr("image_uuids", "cannot be set when images are objects; set uuids on each image object instead")
	}
	if len(images[0].contents) != len(uuids) {
		return nil, ferr("image_uuids", "length (%d) must match images length (%d)", len(uuids), len(images[0].contents))
	}
	for i, u := range uuids {
		if u == "" {
			return nil, ferr(fmt.Sprintf("image_uuids[%d]", i), "must not be empty")
		}
	}
	images[0].uuids = uuids
	return images, nil
}

func firstElement(arr []byte) []byte {
	var out []byte
	_ = elements(arr, func(_ int, e []byte, _ int) error {
		out = e
		return errStop
	})
	return out
}

// checkMedia rejects media that this package cannot pass through: aiperf
// reads local files and re-encodes them, which a streaming decoder does
// not do. Images and videos must be URLs (scheme and host) or data: URIs;
// audio must be "wav,<base64>", "mp3,<base64>" or a data:audio URI.
func checkMedia(modality, field, s string) *fieldError {
	if s == "" || modality == "text" {
		return nil
	}
	lower := strings.ToLower(s[:min(len(s), 16)])
	if modality == "audio" {
		if strings.HasPrefix(lower, "data:audio/") && strings.Contains(s, ",") {
			return nil
		}
		if f, _, ok := strings.Cut(lower, ","); ok && (f == "wav" || f == "mp3") {
			return nil
		}
		return ferr(field, "audio must be \"wav,<base64>\", \"mp3,<base64>\" or a data:audio URI; local files are not read")
	}
	if strings.HasPrefix(lower, "data:") {
		return nil
	}
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
		return nil
	}
	return ferr(field, "must be a URL with a scheme and host or a data: URI; local files are not read (got %q)", truncate(s, 60))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// OpenAI chat message shapes, with keys in aiperf's order.
type message struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type textPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type urlRef struct {
	URL string `json:"url"`
}

type imagePart struct {
	Type     string `json:"type"`
	ImageURL urlRef `json:"image_url"`
	UUID     string `json:"uuid,omitempty"`
}

type videoPart struct {
	Type     string `json:"type"`
	VideoURL urlRef `json:"video_url"`
}

type inputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

type audioPartT struct {
	Type       string     `json:"type"`
	InputAudio inputAudio `json:"input_audio"`
}

// audioPart splits "<fmt>,<b64>" or "data:audio/<fmt>;base64,<b64>".
func audioPart(s string) audioPartT {
	head, b64, _ := strings.Cut(s, ",")
	format := head
	if strings.HasPrefix(strings.ToLower(head), "data:audio/") {
		format, _, _ = strings.Cut(head[len("data:audio/"):], ";")
		if format == "" {
			format = "wav"
		}
	}
	return audioPartT{Type: "input_audio", InputAudio: inputAudio{Data: b64, Format: format}}
}

// marshalNoEscape encodes v as compact JSON without HTML escaping, as
// Python's json does.
func marshalNoEscape(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
