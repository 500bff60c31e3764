package consume

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// NewID is a consumer tag's or a replay run's id: the UTC time (sortable,
// readable in a journal's name) and random bits.
func NewID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}
