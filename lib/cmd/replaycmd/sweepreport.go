package replaycmd

import (
	"path/filepath"

	"github.com/aiperf/toolkit/lib/cmd/base"
	"github.com/aiperf/toolkit/lib/sweep"
	"github.com/urfave/cli/v2"
)

// sweepReportCommand reprints a finished (or interrupted) sweep from its
// sweep.json, and writes its page.
func sweepReportCommand() *cli.Command {
	var page string
	return &cli.Command{
		Name:      "report",
		Usage:     "print a sweep's table from DIR/sweep.json, and with --html write its page",
		ArgsUsage: "DIR",
		Description: "Reads DIR/sweep.json (written by aiperf-replay sweep -o DIR), prints the table of its steps and\n" +
			"its answer, and with --html FILE writes the same page as sweep --html. An interrupted sweep has\n" +
			"no answer yet: the table says so. Runs nothing; exit 0, or 2 on a missing or bad sweep.json.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "html", Usage: "write the sweep as one self-contained HTML page to `FILE`", Destination: &page},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return base.UsageError("want one DIR argument (a sweep's -o), got %d", c.NArg())
			}
			path := filepath.Join(c.Args().First(), sweep.File)
			st, err := sweep.LoadState(path)
			if err != nil {
				return base.UsageError("%v", err)
			}
			if st == nil {
				return base.UsageError("%s does not exist: not a sweep's folder", path)
			}
			if page != "" {
				if err := checkHTML(page, path); err != nil {
					return err
				}
				if err := writeSweepHTML(page, path, st); err != nil {
					return err
				}
			}
			return sweep.WriteTable(c.App.Writer, st.Steps, st.Result(), st.ElapsedSec)
		},
	}
}

// sweepWithReport is the sweep command with its report subcommand.
func sweepWithReport() *cli.Command {
	c := sweepCommand()
	c.Subcommands = []*cli.Command{sweepReportCommand()}
	return c
}
