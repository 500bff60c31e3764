package keyshape

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// testNow is the clock of the package's tests: ids carrying a time count
// up to a day after it.
var testNow = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func TestClassifySegments(t *testing.T) {
	now := testNow
	v7 := uuidV7(now)
	for seg, want := range map[string]Kind{
		"lock":                                 KindWord,
		"":                                     KindEmpty,
		"42":                                   KindInt,
		"0042":                                 KindID,
		"1764590400":                           KindEpoch,
		"1764590400123":                        KindEpoch,
		"1800000000000000000":                  KindSnowflake,
		"8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f": KindUUID,
		v7:                                     KindUUID,
		"01ARZ3NDEKTSV4RRFFQ69G5FAV":           KindULID,
		"507f1f77bcf86cd799439011":             KindObjectID,
		"fe3a4bd1c2e9a8b7c6d5e4f3":             KindJID, // first 4 bytes: year 2105
		"9e107d9d372bb6826bd81d3542a419d6":     KindMD5,
		"2fd4e1c67a2d28fced849ee1bb76e7391b93eb12": KindSHA1,
		strings.Repeat("ab12", 16):                 KindSHA256,
		"deadbeef01":                               KindHex,
		"Xk3_9aQ-zP1mN8bV2cL7wR":                   KindBase64,
		"2026-12-01":                               KindDate,
		"ORD-1234":                                 KindID,
		"payment_v2":                               KindID,
		"MyServiceWorkerInstance":                  KindWord,
		"HTTPServerConfig":                         KindWord,
		"getUserAccountSettings":                   KindWord,
		// go-zero's stringx.Randn(16) with no digit drawn (issue 42).
		"ZoOFdTWEjqSKqYbL": KindBase64,
		"kmrCkDjkPCB7xnkC": KindBase64,
	} {
		if got := Classify(seg, testNow).Kind; got != want {
			t.Errorf("classify(%q) = %s, want %s", seg, got, want)
		}
	}
	if sh := Classify(v7, testNow); sh.Version != 7 || sh.Time.Sub(now).Abs() > time.Second {
		t.Errorf("v7 uuid decoded as version %d time %s, want 7 and %s", sh.Version, sh.Time, now)
	}
	if sh := Classify("01ARZ3NDEKTSV4RRFFQ69G5FAV", testNow); !sh.Time.Equal(time.UnixMilli(1469922850259)) {
		t.Errorf("ULID time %s, want 2016-07-30T23:54:10.259Z", sh.Time.UTC())
	}
	if sh := Classify("507f1f77bcf86cd799439011", testNow); sh.Time.Unix() != 0x507f1f77 {
		t.Errorf("ObjectId time %d", sh.Time.Unix())
	}
}

// uuidV7 builds a version 7 UUID for t.
func uuidV7(t time.Time) string {
	ms := uint64(t.UnixMilli())
	return fmt.Sprintf("%08x-%04x-7abc-9def-0123456789ab", ms>>16, ms&0xffff)
}

func TestTemplates(t *testing.T) {
	for key, want := range map[string]string{
		"lock:payment:order:8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f":                   "lock:payment:order:{uuid}",
		"uniquejobs:9e107d9d372bb6826bd81d3542a419d6:LOCKED":                        "uniquejobs:{hex32}:LOCKED",
		"bull:emails:123:lock":                                                      "bull:emails:{int}:lock",
		"asynq:{default}:unique:email:send:9e107d9d372bb6826bd81d3542a419d6":        "asynq:{default}:unique:email:send:{hex32}",
		"job-lock:default:nightly-report":                                           "job-lock:default:nightly-report",
		"a:b:c:d:e:f:g:h:i:j:k:l:m:n:o":                                             "a:b:c:d:e:f:g:h:i:j:k:l:m:n:o",
		"lock/tenant/42/invoice/2026-12":                                            "lock/tenant/{int}/invoice/{date}",
		"lock:order:42:" + strings.Repeat("x", 10) + ":" + "Xk3_9aQ-zP1mN8bV2cL7wR": "lock:order:{int}:xxxxxxxxxx:{base64}",
		// A name that ends in an id varies only there.
		"celery-task-meta-8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f":            "celery-task-meta-{uuid}",
		":1:feeds.tasks.import_feed-lock-9e107d9d372bb6826bd81d3542a419d6": ":{int}:feeds.tasks.import_feed-lock-{hex32}",
		"report_3f786850e387550fdab836ed7e6dc881de23001b":                  "report_{hex40}",
		"lock-8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f:x":                      "lock-{uuid}:x",
		"8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f":                             "{uuid}",
		"order-9e107d9d372bb6826bd81d3542a419dz":                           "{id}",
	} {
		if got := Template(Split(key, testNow)); got != want {
			t.Errorf("template(%q) = %q, want %q", key, got, want)
		}
	}
}
