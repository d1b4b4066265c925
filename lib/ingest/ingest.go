// Package ingest turns trace rows into records: it names sessions, numbers
// turns, keeps verbatim bodies as they are and synthesizes exact-length
// prompts for rows that only give input_length (+ hash_ids).
//
// Output depends only on the whole input and the options: records carry the
// row's position in the reader's order as their line key and a dense session
// number, so the outputs of every shard (Options.ShardIndex of ShardCount)
// pack to the same store as an unsharded run.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"runtime"
	"strconv"
	"sync"

	"github.com/aiperf/toolkit/lib/jsonx"
	"github.com/aiperf/toolkit/lib/record"
	"github.com/aiperf/toolkit/lib/synth"
	"github.com/aiperf/toolkit/lib/tokenizer"
	"github.com/aiperf/toolkit/lib/trace"
)

// Options control a run.
type Options struct {
	// Synth sets the prompt synthesis; a BlockSize of 0 takes the block size
	// the trace format was recorded with (trace.KVBlockSize).
	Synth      synth.Options
	ShardIndex int // emit sessions whose number % ShardCount == ShardIndex
	ShardCount int // 0 or 1: no sharding
	Verify     bool
	// Tokenizer is loaded on first need (a verbatim-only trace never needs one).
	Tokenizer func() (*tokenizer.Tokenizer, error)
	// Progress, when set, is called now and then with rows and prompt tokens so far.
	Progress func(rows, tokens int64)
	// OutputName names the writer in errors ("" is "the output").
	OutputName string
	// Settings, when set, returns the description of the settings that
	// shaped the records of a trace of format typ, which goes on the end
	// line (record.Encoder.Settings) for aiperf-pack to carry into the
	// store.
	Settings func(typ string) (string, error)
	// ModelMap renames a trace's recorded models (weka_trace).
	ModelMap map[string]string
	// NoBlocks writes agentic (weka_trace) records with every prompt's
	// whole text, not in the block form (record.KindBlockMessages).
	NoBlocks bool
}

// Stats summarise a run.
type Stats struct {
	Rows, Emitted, Sessions int64
	ShardSessions           int64 // of Sessions, this shard's (all of them unsharded)
	PromptTokens            int64 // tokens of emitted synthesized and text prompts
	Blocks                  int
	Defined                 int64 // block lines written (the block form)
	Verified                int64
}

// ErrVerify reports prompts that did not re-encode to their input length.
var ErrVerify = errors.New("verify failed")

// OutputError is a failure to write the records (a full disk, a closed
// pipe): a problem of the output, not of any trace line.
type OutputError struct {
	Name string
	Err  error
}

func (e *OutputError) Error() string { return "write " + e.Name + ": " + e.Err.Error() }
func (e *OutputError) Unwrap() error { return e.Err }

// Run reads every row of tr and writes records to w (with the end line).
// When ctx is cancelled it flushes the records written so far, without the
// end line, and returns ctx.Err().
func Run(ctx context.Context, tr *trace.Reader, w io.Writer, o Options) (Stats, error) {
	r := newRunner(tr, w, o)
	defer r.stopVerifier()
	for {
		if err := ctx.Err(); err != nil {
			return r.st, r.abort(err)
		}
		row, err := tr.Next()
		if err == io.EOF {
			return r.st, r.end()
		}
		if err != nil {
			return r.st, r.abort(err)
		}
		if err := r.row(row); err != nil {
			return r.st, r.abort(err)
		}
	}
}

// runner is the state of one Run.
type runner struct {
	o        Options
	tr       *trace.Reader
	out      *trackedWriter
	enc      *record.Encoder
	st       Stats
	sessions sessionNumbers
	tok      *tokenizer.Tokenizer // loaded on first need, with syn and ver
	syn      *synth.Synth
	ver      *verifier
	lit      []byte // the prompt being built
	vtext    []byte // a text part to verify (the block form)
	blocks   blockTable
	// autoBlock: the block size is the first weka_trace file's own
	autoBlock bool
}

func newRunner(tr *trace.Reader, w io.Writer, o Options) *runner {
	if o.ShardCount <= 1 {
		o.ShardCount, o.ShardIndex = 1, 0
	}
	auto := o.Synth.BlockSize == 0 && tr.Type() == trace.TypeWeka
	if o.Synth.BlockSize == 0 {
		o.Synth.BlockSize = trace.KVBlockSize(tr.Type())
	}
	if o.OutputName == "" {
		o.OutputName = "the output"
	}
	out := &trackedWriter{w: w}
	return &runner{o: o, tr: tr, out: out, enc: record.NewEncoder(out), sessions: newSessionNumbers(), autoBlock: auto}
}

// row numbers the row's session and turn and, when the session is this
// shard's, writes its record.
func (r *runner) row(row *trace.Row) error {
	r.st.Rows++
	sess, turn, err := r.sessions.place(row.SessionID)
	if err == nil {
		err = r.sessions.name(row, sess)
	}
	if err != nil {
		return &trace.Error{File: row.Source, Line: row.Line, Field: "session_id", Err: err}
	}
	if sess%int64(r.o.ShardCount) != int64(r.o.ShardIndex) {
		return r.checkOnly(row)
	}
	rec, err := r.record(row, sess, turn)
	if err != nil {
		return err
	}
	if err := r.enc.Encode(rec); err != nil {
		return r.outputError(err)
	}
	r.st.Emitted++
	if r.o.Progress != nil && r.st.Emitted&255 == 0 {
		r.o.Progress(r.st.Rows, r.st.PromptTokens)
	}
	return nil
}

// checkOnly validates the hash_ids of a row another shard emits, so that
// every shard fails on the same bad row.
func (r *runner) checkOnly(row *trace.Row) error {
	if row.Agentic != nil {
		return r.checkAgentic(row)
	}
	if row.HasText || row.Messages != nil || row.Payload != nil || row.InputLength <= 0 {
		return nil
	}
	if err := r.loadSynth(); err != nil {
		return err
	}
	if err := r.syn.Check(row.Line, row.InputLength, row.HashIDs); err != nil {
		return rowErr(row, err)
	}
	return nil
}

// record builds the record of one row: placement, timing, token counts and
// the body source.
func (r *runner) record(row *trace.Row, sess int64, turn uint32) (*record.Record, error) {
	rec := &record.Record{Line: uint64(r.st.Rows), Session: sess, Turn: turn, SessionID: row.SessionID}
	if rec.SessionID == "" || row.SessionGenerated {
		rec.SessionID = generatedName(sess)
	}
	if row.HasTimestamp {
		rec.HasTimestamp, rec.TimestampNS = true, row.TimestampNS
	} else if row.HasDelay {
		rec.HasDelay, rec.DelayNS = true, row.DelayNS
	}
	var err error
	if row.HasOutputLength {
		rec.HasMaxTokens = true
		if rec.MaxTokens, err = tokens32(row, "output_length", row.OutputLength); err != nil {
			return nil, err
		}
	}
	if rec.InputTokens, err = tokens32(row, "input_length", max(row.InputLength, 0)); err != nil {
		return nil, err
	}
	rec.Extra = row.Extra
	rec.ContextMode = row.ContextMode
	if row.Agentic != nil {
		rec.Tree = r.tree(row.Agentic)
		return rec, r.agentic(row, rec)
	}
	return rec, r.body(row, rec)
}

// body sets the record's body source: a verbatim payload or messages, the
// literal text, or a prompt synthesized from input_length and hash_ids.
func (r *runner) body(row *trace.Row, rec *record.Record) error {
	switch {
	case row.Payload != nil:
		rec.Kind, rec.Raw, rec.Extra = record.KindPayload, row.Payload, nil
	case row.Messages != nil:
		rec.Kind, rec.Raw, rec.Tools = record.KindMessages, row.Messages, row.Tools
	case row.HasText:
		if err := r.loadTokenizer(); err != nil {
			return err
		}
		r.lit = jsonx.AppendString(r.lit[:0], row.Text)
		rec.Kind, rec.Raw = record.KindPrompt, r.lit
		if rec.InputTokens == 0 {
			field := "text"
			if r.tr.Type() == trace.TypeMooncake {
				field = "text_input"
			}
			n, err := tokens32(row, field, len(r.tok.Encode(row.Text)))
			if err != nil {
				return err
			}
			rec.InputTokens = n
		}
		r.st.PromptTokens += int64(rec.InputTokens)
	case row.InputLength > 0:
		if err := r.loadSynth(); err != nil {
			return err
		}
		var err error
		if r.lit, err = r.syn.AppendPrompt(r.lit[:0], row.Line, row.InputLength, row.HashIDs); err != nil {
			return rowErr(row, err)
		}
		rec.Kind, rec.Raw = record.KindPrompt, r.lit
		if len(row.HashIDs) > 0 {
			// Carried on for the trace's ideal prefix-cache hit rate.
			rec.HashIDs, rec.BlockSize = row.HashIDs, uint32(r.o.Synth.BlockSize)
		}
		r.st.PromptTokens += int64(row.InputLength)
		if r.ver != nil {
			r.ver.submit(row.Source, row.Line, r.lit, row.InputLength)
		}
	default:
		if r.tr.Type() == trace.TypeBurstGPT {
			return &trace.Error{File: row.Source, Line: row.Line, Field: `"Request tokens"`, Err: errors.New("must be greater than 0 (a prompt of 0 tokens)")}
		}
		return &trace.Error{File: row.Source, Line: row.Line, Field: "input_length", Err: errors.New("the row has no prompt: give input_length, text, messages or payload")}
	}
	return nil
}

// tokens32 narrows a token count to the records' 32 bits, refusing what
// does not fit (trace already refuses such counts; this guards the rest).
func tokens32(row *trace.Row, field string, n int) (uint32, error) {
	if n < 0 || uint64(n) > math.MaxUint32 {
		return 0, &trace.Error{File: row.Source, Line: row.Line, Field: field, Err: fmt.Errorf("%d tokens is out of range (at most %d)", n, uint32(math.MaxUint32))}
	}
	return uint32(n), nil
}

// loadTokenizer loads the tokenizer and the verifier on first need.
func (r *runner) loadTokenizer() error {
	if r.tok != nil {
		return nil
	}
	t, err := r.o.Tokenizer()
	if err != nil {
		return err
	}
	r.tok = t
	if r.o.Verify {
		r.ver = newVerifier(t)
	}
	return nil
}

// loadSynth loads the tokenizer and the synthesizer on first need: only a
// row to synthesize needs the corpus, so a tokenizer that synthesis refuses
// still counts the tokens of literal text.
func (r *runner) loadSynth() error {
	if r.syn != nil {
		return nil
	}
	if err := r.loadTokenizer(); err != nil {
		return err
	}
	c, err := synthCorpus(r.tok)
	if err != nil {
		return err
	}
	s, err := synth.New(c, r.o.Synth)
	if err != nil {
		return err
	}
	r.syn = s
	return nil
}

// end finishes a complete run: statistics, the verifier's verdict, then the
// end line.
func (r *runner) end() error {
	r.st.Sessions = r.sessions.next
	if i, n := int64(r.o.ShardIndex), int64(r.o.ShardCount); r.st.Sessions > i {
		r.st.ShardSessions = (r.st.Sessions - i + n - 1) / n // sessions i, i+n, ...
	}
	if r.syn != nil {
		r.st.Blocks = r.syn.Blocks()
	}
	if r.ver != nil {
		n, bad := r.ver.wait()
		r.st.Verified = n
		if bad != nil {
			return r.abort(fmt.Errorf("%w: %s", ErrVerify, bad))
		}
	}
	if r.o.Settings != nil {
		s, err := r.o.Settings(r.tr.Type())
		if err != nil {
			return r.abort(err)
		}
		r.enc.Settings = s
	}
	if err := r.enc.End(); err != nil {
		return r.outputError(err)
	}
	return nil
}

// abort flushes the records written so far, without the end line (so pack
// refuses them), and returns err; a failure of the output itself wins.
func (r *runner) abort(err error) error {
	var oe *OutputError
	if errors.As(err, &oe) {
		return err
	}
	if ferr := r.enc.Flush(); ferr != nil {
		return r.outputError(ferr)
	}
	return err
}

// outputError reports a write failure once, as the output's: the first
// error the writer returned.
func (r *runner) outputError(err error) error {
	if r.out.err != nil {
		err = r.out.err
	}
	var pe *fs.PathError // "write /dev/stdout: ..." says less than the name we have
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &OutputError{Name: r.o.OutputName, Err: err}
}

func (r *runner) stopVerifier() {
	if r.ver != nil {
		r.ver.close()
	}
}

// trackedWriter remembers the first error of the writer under the encoder.
type trackedWriter struct {
	w   io.Writer
	err error
}

func (t *trackedWriter) Write(p []byte) (int, error) {
	if t.err != nil {
		return 0, t.err
	}
	n, err := t.w.Write(p)
	if err != nil {
		t.err = err
	}
	return n, err
}

// sessionNumbers numbers sessions densely by first appearance (a row
// without a session id is a session of its own) and turns within each.
type sessionNumbers struct {
	byID  map[string]int64
	turns map[int64]uint32
	next  int64
	// names holds the session ids the records carry (the trace's, and the
	// ones generatedName makes for sessions without), for name's check.
	names map[string]int64
}

func newSessionNumbers() sessionNumbers {
	return sessionNumbers{byID: map[string]int64{}, turns: map[int64]uint32{}, names: map[string]int64{}}
}

// generatedName is the session id of session sess when the trace gives it
// none.
func generatedName(sess int64) string { return "session_" + strconv.FormatInt(sess, 10) }

// name refuses a session id that two sessions would carry: a trace's
// "session_1" beside a session without an id numbered 1 (the id this
// package gives it). inputs.json and the exports key sessions by id, and
// would merge the two.
func (s *sessionNumbers) name(row *trace.Row, sess int64) error {
	id, given := row.SessionID, true
	if id == "" || row.SessionGenerated {
		id, given = generatedName(sess), false
	}
	prev, ok := s.names[id]
	switch {
	case !ok:
		s.names[id] = sess
	case prev != sess && given:
		return fmt.Errorf("%q is also the id this tool gives the trace's session %d, which has none: rename it", id, prev)
	case prev != sess:
		return fmt.Errorf("this row's session has no id, and the one it would get, %q, names another session of the trace: rename that one", id)
	}
	return nil
}

func (s *sessionNumbers) place(id string) (sess int64, turn uint32, err error) {
	if id == "" {
		sess = s.next
		s.next++
		return sess, 0, nil
	}
	sess, ok := s.byID[id]
	if !ok {
		sess = s.next
		s.byID[id] = sess
		s.next++
	}
	turn = s.turns[sess]
	if turn == math.MaxUint32 {
		return 0, 0, fmt.Errorf("session %q has more than %d turns", id, uint32(math.MaxUint32))
	}
	s.turns[sess] = turn + 1
	return sess, turn, nil
}

func rowErr(row *trace.Row, err error) error {
	var se *synth.Error
	if errors.As(err, &se) {
		return &trace.Error{File: row.Source, Line: row.Line, Field: se.Field, Err: errors.New(se.Msg)}
	}
	return &trace.Error{File: row.Source, Line: row.Line, Err: err}
}

var corpusCache struct {
	sync.Mutex
	tok *tokenizer.Tokenizer
	c   *synth.Corpus
}

// synthCorpus tokenizes the shipped corpus once per tokenizer and process.
func synthCorpus(tok *tokenizer.Tokenizer) (*synth.Corpus, error) {
	corpusCache.Lock()
	defer corpusCache.Unlock()
	if corpusCache.tok == tok {
		return corpusCache.c, nil
	}
	text, err := synth.CorpusText()
	if err != nil {
		return nil, err
	}
	c, err := synth.NewCorpus(tok, text)
	if err != nil {
		return nil, err
	}
	corpusCache.tok, corpusCache.c = tok, c
	return c, nil
}

// verifier re-encodes prompts on every core and remembers the first mismatch.
type verifier struct {
	tok  *tokenizer.Tokenizer
	jobs chan verifyJob
	wg   sync.WaitGroup
	mu   sync.Mutex
	n    int64
	bad  error
	badN int
	once sync.Once
}

type verifyJob struct {
	file string
	line int64
	lit  []byte
	want int
}

func newVerifier(tok *tokenizer.Tokenizer) *verifier {
	v := &verifier{tok: tok, jobs: make(chan verifyJob, 64)}
	for i := 0; i < runtime.GOMAXPROCS(0); i++ {
		v.wg.Add(1)
		go func() {
			defer v.wg.Done()
			for j := range v.jobs {
				s, err := jsonx.Unquote(j.lit)
				got := -1
				if err == nil {
					got = len(v.tok.Encode(s))
				}
				v.mu.Lock()
				v.n++
				if got != j.want {
					v.badN++
					if v.bad == nil || j.line < v.badLine() {
						v.bad = &trace.Error{File: j.file, Line: j.line, Field: "input_length", Err: fmt.Errorf("the prompt re-encodes to %d tokens, want %d", got, j.want)}
					}
				}
				v.mu.Unlock()
			}
		}()
	}
	return v
}

func (v *verifier) badLine() int64 {
	var te *trace.Error
	if errors.As(v.bad, &te) {
		return te.Line
	}
	return 0
}

func (v *verifier) submit(file string, line int64, lit []byte, want int) {
	v.jobs <- verifyJob{file: file, line: line, lit: append([]byte(nil), lit...), want: want}
}

func (v *verifier) close() { v.once.Do(func() { close(v.jobs) }) }

func (v *verifier) wait() (int64, error) {
	v.close()
	v.wg.Wait()
	if v.bad != nil {
		return v.n, fmt.Errorf("%d of %d prompts have the wrong length; first: %v", v.badN, v.n, v.bad)
	}
	return v.n, nil
}
