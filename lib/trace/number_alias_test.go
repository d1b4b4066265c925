package trace

import "github.com/aiperf/toolkit/lib/jsonx"

// The number parsers moved to jsonx; these names keep TestScaledDecimal and
// TestParseUint64 checking the functions that the decoders call.
var (
	parseUint64  = jsonx.ParseUint
	errNumSyntax = jsonx.ErrNotNumber
	errNumRange  = jsonx.ErrRange
)

func scaledDecimal(s string, scale int) (int64, bool, bool, error) {
	return jsonx.ParseDecimal(s, scale)
}
