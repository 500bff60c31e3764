package judge

import (
	"fmt"
	"time"
)

// testNow is the clock of the package's tests: ids carrying a time count
// up to a day after it.
var testNow = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// uuidV7 is a version 7 UUID carrying t.
func uuidV7(t time.Time) string {
	ms := uint64(t.UnixMilli())
	return fmt.Sprintf("%08x-%04x-7abc-9def-0123456789ab", ms>>16, ms&0xffff)
}
