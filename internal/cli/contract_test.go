package cli_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dupctl/dupctl/internal/testenv"
)

// The contract suite: every command meets the same hostile inputs (empty,
// binary, invalid UTF-8, a 50 MB line, truncated JSON, CSV and YAML; URLs
// with raw special characters in the password, a port that accepts and
// never answers, a wrong password, Ctrl-C while connecting) and must keep
// the documented contract each time: the exact exit code class, stdout
// empty or valid in the format asked for, no password, no raw control
// byte, and an answer in bounded time. A command joins by adding one line
// to fileCommands or urlCommands.

// fileCommands take a file the user gives; {file} is replaced.
var fileCommands = []string{
	"audit logs {file}",
	"keys unstable {file}",
	"inspect ttl {file}",
	"audit cache --cache-pattern job:{key} --table jobs --live-keys {file} --redis-url redis://127.0.0.1:1 --database-url " +
		"postgres://u@127.0.0.1:1/x",
	"simulate crash --config {file}",
	"version --config {file}",
}

// urlCommands dial systems; {redis}, {postgres} and {amqp} are replaced.
var urlCommands = []string{
	"inspect lock --redis-url {redis}",
	"inspect store --database-url {postgres}",
	"audit cache --cache-pattern job:{key} --table jobs --redis-url {redis} --database-url {postgres}",
	"dlq stats --queue contract.q --amqp-url {amqp}",
	"dlq peek --queue contract.q --amqp-url {amqp}",
	"dlq export --queue contract.q --out {tmp}/export.jsonl --amqp-url {amqp}",
	"dlq replay --queue contract.q --amqp-url {amqp}",
	"keys unstable --query 'select 1' --database-url {postgres}",
	"inspect ttl --query 'select 1' --database-url {postgres}",
	"doctor --redis-url {redis} --database-url {postgres} --amqp-url {amqp} --queue contract.q",
}

const secret = "Zq9Secret"

// cutSecret is a password that raw URL characters cut into pieces (issue
// 27: "p@ss/w#rd?x y" leaked 12 of its 13 characters); no piece may be
// printed.
var (
	cutSecret    = "Qa7@Zk2/w#Wv3?x y"
	secretPieces = []string{"Qa7", "Zk2", "Wv3"}
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// dupctlBinary builds the command once for the suite: Ctrl-C needs a
// process of its own.
func dupctlBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dupctl-contract")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "dupctl")
		out, err := exec.Command("go", "build", "-o", binPath, "../../cmd/dupctl").CombinedOutput()
		if err != nil {
			binErr = err
			t.Logf("%s", out)
		}
	})
	if binErr != nil {
		t.Fatalf("build dupctl: %v", binErr)
	}
	return binPath
}

type outcome struct {
	code           int
	stdout, stderr []byte
	// took is from the start, or from the signal when one was sent.
	took time.Duration
}

// runDupctl runs one command line (split as a shell would, on spaces,
// with single quotes) and, with interrupt > 0, sends SIGINT after it.
func runDupctl(t *testing.T, line string, interrupt time.Duration) outcome {
	t.Helper()
	var await func(pid int) error
	if interrupt > 0 {
		await = func(int) error { time.Sleep(interrupt); return nil }
	}
	return runDupctlUntil(t, line, await)
}

// runDupctlUntil runs one command line and, with await, sends SIGINT once
// await returns (an error from it fails the test, and the signal is sent
// anyway).
func runDupctlUntil(t *testing.T, line string, await func(pid int) error) outcome {
	t.Helper()
	cmd := exec.Command(dupctlBinary(t), splitLine(line)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "DUPCTL_REDIS_URL=", "DUPCTL_DATABASE_URL=", "DUPCTL_AMQP_URL=", "REDIS_URL=",
		"DATABASE_URL=", "AMQP_URL=", "DUPCTL_CONFIG=")
	cmd.Dir = t.TempDir()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Errorf("start dupctl %s: %v", line, err) // (called from several goroutines: no Fatal)
		return outcome{code: -1}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if await != nil {
		if err := await(cmd.Process.Pid); err != nil {
			t.Errorf("dupctl %s: before the signal: %v", line, err)
		}
		start = time.Now()
		_ = cmd.Process.Signal(syscall.SIGINT)
	}
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Errorf("dupctl %s: no answer in 90s", line)
	}
	return outcome{code: cmd.ProcessState.ExitCode(), stdout: out.Bytes(), stderr: errOut.Bytes(), took: time.Since(start)}
}

func splitLine(line string) []string {
	var args []string
	var cur strings.Builder
	quoted, in := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				args = append(args, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		args = append(args, cur.String())
	}
	return args
}

// holds checks what every outcome must hold whatever the input.
func holds(t *testing.T, line, format string, o outcome, codes ...int) {
	t.Helper()
	if !slices.Contains(codes, o.code) {
		t.Errorf("dupctl %s: exit %d, want one of %v\nstderr: %s", line, o.code, codes, o.stderr)
	}
	for _, stream := range [][]byte{o.stdout, o.stderr} {
		if bytes.Contains(stream, []byte(secret)) {
			t.Errorf("dupctl %s: the password is printed: %s", line, stream)
		}
		for _, p := range secretPieces {
			if bytes.Contains(stream, []byte(p)) {
				t.Errorf("dupctl %s: a piece of the password (%s) is printed: %s", line, p, stream)
			}
		}
		for i := 0; i < len(stream); i++ {
			// (DEL is legal, and harmless, in JSON and XML)
			if c := stream[i]; c < 0x20 && c != '\n' && c != '\t' || c == 0x7f && format == "table" {
				t.Errorf("dupctl %s: a raw control byte 0x%02x is printed", line, c)
				break
			}
		}
		if !utf8.Valid(stream) {
			t.Errorf("dupctl %s: output is not UTF-8", line)
		}
	}
	if strings.Contains(string(o.stderr), "panic:") || strings.Contains(string(o.stderr), "goroutine ") {
		t.Errorf("dupctl %s: a panic: %s", line, o.stderr)
	}
	if o.code == 2 || o.code == 3 || o.code == 130 {
		if strings.Count(strings.TrimSpace(string(o.stderr)), "\n") > 0 {
			t.Errorf("dupctl %s: the error is more than one line:\n%s", line, o.stderr)
		}
	}
	switch {
	case len(o.stdout) == 0:
		if o.code == 0 || o.code == 1 {
			t.Errorf("dupctl %s: exit %d with nothing on stdout", line, o.code)
		}
	case format == "json":
		var v any
		if err := json.Unmarshal(o.stdout, &v); err != nil {
			t.Errorf("dupctl %s -o json: stdout is not JSON (%v): %.200s", line, err, o.stdout)
		}
	case format == "junit":
		var v struct{ XMLName xml.Name }
		if err := xml.Unmarshal(o.stdout, &v); err != nil {
			t.Errorf("dupctl %s -o junit: stdout is not XML (%v): %.200s", line, err, o.stdout)
		}
	case o.code > 1 && o.code != 130 && !(o.code == 3 && strings.HasPrefix(line, "doctor ")):
		// (doctor prints every line, the unreachable ones not checked,
		// then exits 3; an interrupted replay prints its summary)
		t.Errorf("dupctl %s: exit %d but stdout carries output: %.200s", line, o.code, o.stdout)
	}
}

// hostileFiles writes the hostile inputs once.
func hostileFiles(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	rnd := rand.New(rand.NewPCG(1, 2))
	garbage := make([]byte, 64<<10)
	for i := range garbage {
		garbage[i] = byte(rnd.Uint32())
	}
	long := bytes.Repeat([]byte("a"), 50<<20)
	files := map[string][]byte{
		"empty":        nil,
		"binary":       garbage,
		"invalid-utf8": []byte("{\"msg\":\"side_effect \xff\xfe\"}\nline \xc3\x28 two\n\xf0\x28\x8c\xbc\n"),
		"50MB-line":    long,
		"truncated-json": []byte("{\"time\":\"2026-12-01T12:00:00Z\",\"event\":\"side_effect\",\"orderId\":\"o-1\",\"msg\":\"charged\n" +
			"{\"time\":\"2026-12-01T12:00:01Z\",\"eve"),
		"truncated-csv":  []byte("job_type,duration_ms,started_at\npayment,1200,2026-12-01T12:00:00Z\npayment,\"13"),
		"truncated-yaml": []byte("version: 1\njobs:\n  - name: payment\n    lock_ttl: 2m\n    idempotency: {table: \"pay"),
		"control-bytes":  []byte("{\"event\":\"side_effect\",\"orderId\":\"o-\x1b]0;pwned\x07\x1b[2J\",\"msg\":\"\x1b[8mhidden\r\"}\n"),
	}
	out := map[string]string{}
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out[name] = p
	}
	return out
}

// TestContractHostileFiles: every command that reads a file the user
// gives, on every hostile file, in every output format.
func TestContractHostileFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("contract suite: runs the binary some hundred times")
	}
	dupctlBinary(t)
	files := hostileFiles(t)
	for _, tmpl := range fileCommands {
		for name, path := range files {
			for _, format := range []string{"table", "json", "junit"} {
				line := strings.ReplaceAll(tmpl, "{file}", path) + " -o " + format
				t.Run(strings.Fields(tmpl)[0]+"_"+strings.Fields(tmpl)[1]+"/"+name+"/"+format, func(t *testing.T) {
					t.Parallel()
					o := runDupctl(t, line, 0)
					// A file is input: it is read (0, 1) or refused (2);
					// only audit cache dials after reading, and its
					// servers here are closed (3).
					codes := []int{0, 1, 2}
					if strings.HasPrefix(tmpl, "audit cache") {
						codes = append(codes, 3)
					}
					holds(t, line, format, o, codes...)
					if o.took > 30*time.Second {
						t.Errorf("dupctl %s took %s", line, o.took)
					}
					if o.code == 0 && format == "json" && name != "truncated-yaml" && name != "control-bytes" && !strings.HasPrefix(tmpl, "version") &&
						!strings.HasPrefix(tmpl, "simulate") {
						// Nonsense is never green: at least a warning.
						var rep struct{ Summary struct{ Error, Warn int } }
						_ = json.Unmarshal(o.stdout, &rep)
						if rep.Summary.Error+rep.Summary.Warn == 0 {
							t.Errorf("dupctl %s: exit 0 and no warning on %s input", line, name)
						}
					}
				})
			}
		}
	}
}

// TestContractHostileServers: every command that dials, against URLs with
// raw special characters in the password, a port that never answers (with
// --timeout, and with Ctrl-C) and a wrong password.
func TestContractHostileServers(t *testing.T) {
	if testing.Short() {
		t.Skip("contract suite: runs the binary some hundred times")
	}
	dupctlBinary(t) // built here, not in a goroutine that may not Fatal
	hole := testenv.Blackhole(t)
	type urls struct{ redis, postgres, amqp string }
	type serverCase struct {
		name string
		u    urls
		args string
		// interrupt: Ctrl-C once dupctl is connecting to the blackhole;
		// within is then counted from the signal.
		interrupt bool
		codes     []int
		within    time.Duration
	}
	cases := []serverCase{
		{"raw special characters in the password", urls{
			"redis://:" + secret + "/#?@127.0.0.1:6379/0", "postgres://u:" + secret + " /#?@127.0.0.1:5432/x", "amqp://u:" + secret +
				"/#?@127.0.0.1:5672/"},
			"", false, []int{2}, 10 * time.Second},
		{"a password cut into pieces by raw characters", urls{
			"redis://u:'" + cutSecret + "'@127.0.0.1:6379/0", "postgres://postgres:'" + cutSecret + "'@127.0.0.1:5432/test", "amqp://guest:'" +
				cutSecret + "'@127.0.0.1:5672/"},
			"", false, []int{2}, 10 * time.Second},
		{"a key=value password with raw spaces", urls{
			"redis://u:'" + cutSecret + "'@127.0.0.1:6379/0", "'host=127.0.0.1 user=postgres password=Qa7 Zk2 Wv3 dbname=test'", "amqp://guest:'" +
				cutSecret + "'@127.0.0.1:5672/"},
			"", false, []int{2}, 10 * time.Second},
		{"blackhole with --timeout", urls{"redis://:" + secret + "@" + hole + "/0", "postgres://u:" + secret + "@" + hole + "/x", "amqp://u:" +
			secret + "@" + hole + "/"},
			"--timeout 1s", false, []int{3}, 6 * time.Second},
		{"Ctrl-C while connecting", urls{"redis://:" + secret + "@" + hole + "/0", "postgres://u:" + secret + "@" + hole + "/x", "amqp://u:" +
			secret + "@" + hole + "/"},
			"", true, []int{130}, 3 * time.Second},
	}
	if testenv.Required() || os.Getenv("DUPCTL_TEST_AMQP_URL") == "" {
		// A wrong password against the real servers: RabbitMQ refuses it;
		// Redis (no requirepass) and PostgreSQL (trust) may accept any, so
		// they count as reached (0 or 1).
		testenv.Need(t, testenv.AMQP)
		// Redis's database 15: a scan of the shared database 0 reads (and so
		// touches) other tests' keys, and an idle-time test in
		// internal/inspect/lock saw its untouched lock touched.
		cases = append(cases, serverCase{"wrong password", urls{"redis://u:" + secret + "@127.0.0.1:6379/15", "postgres://u:" + secret +
			"@127.0.0.1:5432/test", "amqp://guest:" + secret + "@127.0.0.1:5672/"},
			"--timeout 20s", false, []int{0, 1, 2, 3}, 25 * time.Second})
	}
	for _, tmpl := range urlCommands {
		for _, c := range cases {
			name := strings.Join(strings.Fields(tmpl)[:2], "_") + "/" + c.name
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				// The three formats at once: these runs mostly wait (a
				// timeout, a signal), so they overlap well.
				var wg sync.WaitGroup
				for _, format := range []string{"table", "json", "junit"} {
					line := strings.NewReplacer("{redis}", c.u.redis, "{postgres}", c.u.postgres, "{amqp}", c.u.amqp, "{tmp}",
						t.TempDir()).Replace(tmpl) + " " + c.args + " -o " + format
					line = strings.ReplaceAll(line, " /#?@", "/#?@") // the space in the postgres password is one argument: quote it
					wg.Add(1)
					go func() {
						defer wg.Done()
						var await func(pid int) error
						if c.interrupt {
							await = func(pid int) error { return testenv.AwaitConnecting(pid, hole, time.Minute, 500*time.Millisecond) }
						}
						o := runDupctlUntil(t, line, await)
						holds(t, line, format, o, c.codes...)
						if o.took > c.within {
							t.Errorf("dupctl %s took %s, bound %s", line, o.took, c.within)
						}
					}()
				}
				wg.Wait()
			})
		}
	}
}
