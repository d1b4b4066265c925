// Package tokenize turns trace rows into records: it names sessions, numbers
// turns, keeps verbatim bodies as they are and synthesizes exact-length
// prompts for rows that only give input_length (+ hash_ids).
//
// Output depends only on the whole input and the options: records carry the
// row's position in the reader's order as their line key and a dense session
// number, so the outputs of every --shard i/N pack to the same store as an
// unsharded run.
package tokenize

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	Synth      synth.Options
	ShardIndex int // emit sessions whose number % ShardCount == ShardIndex
	ShardCount int // 0 or 1: no sharding
	Verify     bool
	// Tokenizer is loaded on first need (a verbatim-only trace never needs one).
	Tokenizer func() (*tokenizer.Tokenizer, error)
	// Progress, when set, is called now and then with rows and prompt tokens so far.
	Progress func(rows, tokens int64)
}

// Stats summarise a run.
type Stats struct {
	Rows, Emitted, Sessions int64
	PromptTokens            int64 // tokens of emitted synthesized and text prompts
	Blocks                  int
	Verified                int64
}

// ErrVerify reports prompts that did not re-encode to their input length.
var ErrVerify = errors.New("verify failed")

// Run reads every row of tr and writes records to w (with the end line).
func Run(ctx context.Context, tr *trace.Reader, w io.Writer, o Options) (Stats, error) {
	var st Stats
	if o.ShardCount <= 1 {
		o.ShardCount, o.ShardIndex = 1, 0
	}
	enc := record.NewEncoder(w)
	var (
		tok      *tokenizer.Tokenizer
		syn      *synth.Synth
		sessions = map[string]int64{}
		turns    = map[int64]uint32{}
		next     int64
		lit      []byte
		ver      *verifier
	)
	needTokenizer := func() error {
		if tok != nil {
			return nil
		}
		t, err := o.Tokenizer()
		if err != nil {
			return err
		}
		c, err := synthCorpus(t)
		if err != nil {
			return err
		}
		s, err := synth.New(c, o.Synth)
		if err != nil {
			return err
		}
		tok, syn = t, s
		if o.Verify {
			ver = newVerifier(tok)
		}
		return nil
	}
	defer func() {
		if ver != nil {
			ver.close()
		}
	}()
	for {
		if st.Rows&255 == 0 && ctx.Err() != nil {
			enc.Flush() // what is done so far, without the end line: pack refuses it
			return st, ctx.Err()
		}
		row, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return st, err
		}
		st.Rows++
		// Session number by first appearance; turn numbers dense within it.
		var sess int64
		if row.SessionID == "" {
			sess = next
			next++
		} else if s, ok := sessions[row.SessionID]; ok {
			sess = s
		} else {
			sess = next
			sessions[row.SessionID] = sess
			next++
		}
		turn := uint32(0)
		if row.SessionID != "" {
			turn = turns[sess]
			turns[sess] = turn + 1
		}
		mine := sess%int64(o.ShardCount) == int64(o.ShardIndex)
		if !mine {
			// Still check hash_ids so every shard fails on the same bad row.
			if !row.HasText && row.Messages == nil && row.Payload == nil && row.InputLength > 0 {
				if err := needTokenizer(); err != nil {
					return st, err
				}
				if err := syn.Check(row.Line, row.InputLength, row.HashIDs); err != nil {
					return st, rowErr(row, err)
				}
			}
			continue
		}
		rec := record.Record{Line: uint64(st.Rows), Session: sess, Turn: turn, SessionID: row.SessionID}
		if rec.SessionID == "" || row.SessionGenerated {
			rec.SessionID = "session_" + strconv.FormatInt(sess, 10)
		}
		if row.HasTimestamp {
			rec.HasTimestamp, rec.TimestampNS = true, row.TimestampNS
		} else if row.HasDelay {
			rec.HasDelay, rec.DelayNS = true, row.DelayNS
		}
		if row.HasOutputLength {
			rec.HasMaxTokens, rec.MaxTokens = true, uint32(row.OutputLength)
		}
		if row.InputLength > 0 {
			rec.InputTokens = uint32(row.InputLength)
		}
		rec.Extra = row.Extra
		switch {
		case row.Payload != nil:
			rec.Kind, rec.Raw, rec.Extra = record.KindPayload, row.Payload, nil
		case row.Messages != nil:
			rec.Kind, rec.Raw, rec.Tools = record.KindMessages, row.Messages, row.Tools
		case row.HasText:
			if err := needTokenizer(); err != nil {
				return st, err
			}
			lit = jsonx.AppendString(lit[:0], row.Text)
			rec.Kind, rec.Raw = record.KindPrompt, lit
			if rec.InputTokens == 0 {
				rec.InputTokens = uint32(len(tok.Encode(row.Text)))
			}
			st.PromptTokens += int64(rec.InputTokens)
		case row.InputLength > 0:
			if err := needTokenizer(); err != nil {
				return st, err
			}
			lit, err = syn.AppendPrompt(lit[:0], row.Line, row.InputLength, row.HashIDs)
			if err != nil {
				return st, rowErr(row, err)
			}
			rec.Kind, rec.Raw = record.KindPrompt, lit
			st.PromptTokens += int64(row.InputLength)
			if ver != nil {
				ver.submit(row.Source, row.Line, lit, row.InputLength)
			}
		default:
			return st, &trace.Error{File: row.Source, Line: row.Line, Field: "input_length", Err: errors.New("the row has no prompt: give input_length, text, messages or payload")}
		}
		if err := enc.Encode(&rec); err != nil {
			return st, err
		}
		st.Emitted++
		if o.Progress != nil && st.Emitted&255 == 0 {
			o.Progress(st.Rows, st.PromptTokens)
		}
	}
	st.Sessions = next
	if syn != nil {
		st.Blocks = syn.Blocks()
	}
	if ver != nil {
		n, bad := ver.wait()
		st.Verified = n
		if bad != nil {
			enc.Flush() // the records so far, without the end line: pack refuses them
			return st, fmt.Errorf("%w: %s", ErrVerify, bad)
		}
	}
	if err := enc.End(); err != nil {
		return st, err
	}
	return st, nil
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
