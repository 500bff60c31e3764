package replay

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// NewRunID names a replay run: the UTC time (sortable, readable in a
// journal's name) and random bits.
func NewRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}
