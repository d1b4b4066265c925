package replaycmd

import (
	"fmt"
	"io"

	"github.com/aiperf/toolkit/lib/result"
)

// summary is a placeholder until lib/metrics lands.
type summary struct{ n, failed int64 }

func (s *summary) errorRate() float64 {
	if s.n == 0 {
		return 0
	}
	return float64(s.failed) / float64(s.n)
}

type goodputSpec string

func parseGoodput(s string) (goodputSpec, error) { return goodputSpec(s), nil }

func summarize(files []string, streaming bool, gp goodputSpec) (*summary, error) {
	src := &records{files: files}
	defer src.Close()
	s := &summary{}
	var r result.Record
	for {
		err := src.Next(&r)
		if err == io.EOF {
			return s, nil
		}
		if err != nil {
			return nil, err
		}
		if r.Warmup() {
			continue
		}
		s.n++
		if r.Err != nil {
			s.failed++
		}
	}
}

func writeOutputs(dir string, s *summary, files []string) error { return nil }

func printTable(w io.Writer, s *summary) {
	fmt.Fprintf(w, "requests %d  failed %d\n", s.n, s.failed)
}
