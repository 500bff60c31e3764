// Package script reads the fleet's event script and truth, and writes the
// manifest each logging program leaves beside its logs.
package script

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Event is one line of the script. Programs in every ecosystem read these and
// log each one (except silent ones) through their logging library.
type Event struct {
	T         time.Time `json:"t"`
	Seq       int       `json:"seq"`
	Instance  string    `json:"instance"`
	Pid       int       `json:"pid"`
	Thread    int       `json:"thread"` // consumer thread index; -1 is the process's main thread
	Component string    `json:"component"`
	Level     string    `json:"level"`
	Step      string    `json:"step"`
	Order     string    `json:"order,omitempty"`
	Silent    bool      `json:"silent,omitempty"` // happens (a kill) but nothing is logged

	MsgID       string `json:"msg_id,omitempty"`
	Delivery    int    `json:"delivery,omitempty"`
	Redelivered bool   `json:"redelivered,omitempty"`
	Attempt     int    `json:"attempt,omitempty"`
	LockKey     string `json:"lock_key,omitempty"`
	Token       string `json:"token,omitempty"`
	TTLms       int    `json:"ttl_ms,omitempty"`
	IdemKey     string `json:"idem_key,omitempty"`
	Source      string `json:"source,omitempty"` // where the idempotency check looked: db or cache
	Amount      int    `json:"amount,omitempty"` // cents
	Currency    string `json:"currency,omitempty"`
	ChargeID    string `json:"charge_id,omitempty"`
	Error       string `json:"error,omitempty"`
	BackoffMs   int    `json:"backoff_ms,omitempty"`
	ElapsedMs   int    `json:"elapsed_ms,omitempty"`
	Processed   int    `json:"processed,omitempty"`
	Version     string `json:"version,omitempty"`
}

// Instance is the part of the fleet truth the logging programs need.
type Instance struct {
	ID      string   `json:"id"`
	Pod     string   `json:"pod"`
	Host    string   `json:"host"`
	Compose string   `json:"compose"`
	Unit    string   `json:"unit"`
	Pids    []int    `json:"pids"`
	Starts  []string `json:"starts"`
	Threads int      `json:"threads"`
}

// Load reads events.jsonl and the instances of fleet-truth.json from dir.
func Load(dir string) ([]Event, map[string]Instance, error) {
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var evs []Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, nil, err
		}
		evs = append(evs, e)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "fleet-truth.json"))
	if err != nil {
		return nil, nil, err
	}
	var t struct {
		Instances []Instance `json:"instances"`
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, nil, err
	}
	m := map[string]Instance{}
	for _, in := range t.Instances {
		m[in.ID] = in
	}
	return evs, m, nil
}

// Manifest says what a logging program wrote: the truth's view of one file set.
type Manifest struct {
	Name      string   `json:"name"`
	Ecosystem string   `json:"ecosystem"`
	Library   string   `json:"library"`
	Layout    string   `json:"layout"`
	Placement string   `json:"placement"` // per-instance files, one merged file, or a shipper's output
	Clock     string   `json:"clock"`     // how lines got the script's virtual time
	Files     []string `json:"files"`
	Workers   []string `json:"workers"` // how the instances are named in these files
	Threads   []string `json:"threads"`
	Loggers   []string `json:"loggers"`
	Other     []string `json:"other"` // other identifiers that are not workers (consumer tags, MDC keys)
}

// WriteManifest writes manifest.json into dir.
func WriteManifest(dir string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "manifest.json"), append(b, '\n'), 0o644)
}

// KubectlPrefix is what `kubectl logs --prefix` writes before each line of a
// pod's container: "[pod/NAME/CONTAINER] ".
func KubectlPrefix(pod, container string, b []byte) []byte {
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		fmt.Fprintf(&out, "[pod/%s/%s] ", pod, container)
		out.Write(line)
	}
	return out.Bytes()
}
