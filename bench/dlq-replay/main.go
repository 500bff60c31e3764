// Command dlq-replay measures moving N dead letters back to their queue
// three ways, on the same broker, in one run, with the same messages:
//
//   - dupctl dlq replay --yes (prefetch window, confirms, mandatory, journal)
//   - a RabbitMQ dynamic shovel with ack-mode on-confirm (what the
//     management UI's "Move messages" creates: broker-local connections),
//     and the same shovel through TCP (shovel-net)
//   - naive: basic.get, publish, wait for the confirm, ack, one at a time
//
// Each round fills a fresh DLQ with N messages carrying an x-death header
// that names a fresh destination queue, runs one method, and waits until
// the destination holds N and the DLQ none. run.sh builds the binaries
// and calls this.
//
// On a cluster (run.sh with CLUSTER=1): -amqp names one node, -rabbitmqctl
// is how to reach that node (its own HOME, cookie and -n), and with
// -queue-type quorum both queues are quorum queues declared through that
// node (so it leads them), the DLQ filled by really rejecting the messages
// from the destination (the broker writes x-death).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dupctl/dupctl/bench/internal/deadletter"
	amqp "github.com/rabbitmq/amqp091-go"
)

func main() {
	url := flag.String("amqp", "amqp://guest:guest@127.0.0.1:5672/", "AMQP URL")
	n := flag.Int("n", 100_000, "messages per round")
	rounds := flag.Int("rounds", 1, "rounds of each method (interleaved); the median is reported")
	dupctl := flag.String("dupctl", "dupctl", "dupctl binary")
	naive := flag.String("naive", "naive", "naive mover binary")
	window := flag.Int("window", 1000, "dupctl --window (its default)")
	methods := flag.String("methods", "dupctl,shovel,shovel-net,naive", "methods to run")
	once := flag.String("once", "naive", "methods run in the first round only (the slow baseline)")
	killAfter := flag.Duration("kill-after", 0, "instead: SIGKILL dupctl this long into each round and measure what it "+
		"left in doubt (kill.go)")
	reads := flag.Int("reads", 0, "instead: dlq stats and dlq export this many times each, alternately, on one DLQ (reads.go)")
	ctl := flag.String("rabbitmqctl", "rabbitmqctl", "rabbitmqctl command line for the shovels' set_parameter, split on spaces "+
		"(on a cluster: env HOME=DIR ... rabbitmqctl -n NODE)")
	cpuPids := flag.String("broker-pids", "", "the broker's OS pids (space-separated): their CPU time per move is printed")
	queueType := flag.String("queue-type", "classic", "classic or quorum: the DLQ's and the destination's type")
	flag.Parse()
	if *queueType != "classic" && *queueType != "quorum" {
		log.Fatalf("-queue-type %q: want classic or quorum", *queueType)
	}

	b := &bench{url: *url, n: *n, dupctl: *dupctl, naive: *naive, window: *window, ctl: strings.Fields(*ctl), queueType: *queueType,
		brokerPids: strings.Fields(*cpuPids)}
	if *reads > 0 {
		if err := b.reads(*reads); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *killAfter > 0 {
		if err := b.killRounds(*killAfter, *rounds); err != nil {
			log.Fatal(err)
		}
		return
	}
	times := map[string][]time.Duration{}
	list := strings.Split(*methods, ",")
	for r := 0; r < *rounds; r++ {
		for _, m := range list {
			if r > 0 && strings.Contains(","+*once+",", ","+m+",") {
				continue
			}
			d, err := b.round(m)
			if err != nil {
				log.Fatalf("%s: %v", m, err)
			}
			fmt.Fprintf(os.Stderr, "round %d %-7s %8.2fs %8.0f msgs/s  load %s\n", r+1, m, d.Seconds(), float64(*n)/d.Seconds(), loadavg())
			times[m] = append(times[m], d)
		}
	}
	// Speed-ups are against the first dupctl method listed.
	ref := ""
	for _, m := range list {
		if m == "dupctl" || strings.HasPrefix(m, "dupctl:") {
			ref = m
			break
		}
	}
	fmt.Printf("| method | messages | rounds | seconds (median) | msgs/s | %s speed-up |\n|---|---:|---:|---:|---:|---:|\n", ref)
	med := map[string]time.Duration{}
	for _, m := range list {
		med[m] = median(times[m])
	}
	for _, m := range list {
		ratio := "-"
		if m != ref && med[ref] > 0 {
			ratio = fmt.Sprintf("%.2fx", med[m].Seconds()/med[ref].Seconds())
		}
		fmt.Printf("| %s | %d | %d | %.2f | %.0f | %s |\n", m, *n, len(times[m]), med[m].Seconds(), float64(*n)/med[m].Seconds(), ratio)
	}
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

type bench struct {
	url, dupctl, naive string
	n, window, seq     int
	ctl                []string // rabbitmqctl and its leading arguments
	queueType          string   // classic or quorum
	brokerPids         []string // beam.smp pids whose CPU time is reported
}

// brokerCPU is the user+system CPU time the broker's processes have used
// (0 without -broker-pids); rounds print its growth during the move.
func (b *bench) brokerCPU() time.Duration {
	var ticks int64
	for _, pid := range b.brokerPids {
		raw, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			continue
		}
		// Fields after the ")" that ends the command name: utime and
		// stime are the 12th and 13th of those.
		f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
		if len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			s, _ := strconv.ParseInt(f[12], 10, 64)
			ticks += u + s
		}
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}

// rabbitmqctl runs b.ctl with args.
func (b *bench) rabbitmqctl(args ...string) *exec.Cmd {
	return exec.Command(b.ctl[0], append(append([]string(nil), b.ctl[1:]...), args...)...)
}

// declare makes the round's DLQ and destination. Classic: both plain, the
// DLQ filled with a written x-death (as the single-node figures were
// measured). Quorum: the destination dead-letters into the DLQ and the
// messages are rejected from it.
func (b *bench) declare(ch *amqp.Channel, conn *amqp.Connection, dlq, dest string) error {
	if b.queueType == "classic" {
		for _, q := range []string{dlq, dest} {
			if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
				return err
			}
		}
		return deadletter.Fill(conn, dlq, dest, b.n, paymentDeadLetter)
	}
	if _, err := ch.QueueDeclare(dlq, true, false, false, false, amqp.Table{"x-queue-type": "quorum"}); err != nil {
		return err
	}
	args := amqp.Table{"x-queue-type": "quorum", "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq}
	if _, err := ch.QueueDeclare(dest, true, false, false, false, args); err != nil {
		return err
	}
	return deadletter.Reject(conn, dlq, dest, b.n, paymentDeadLetter)
}

// loadavg is /proc/loadavg's first three fields ("" elsewhere).
func loadavg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func (b *bench) round(method string) (time.Duration, error) {
	// "dupctl:N" and "shovel:N" override the window or the prefetch count
	// for that method, so one run can compare several settings. A shovel's
	// default src-prefetch-count (and the management UI's Move messages')
	// is 1000.
	window, prefetch := b.window, 1000
	if name, n, ok := strings.Cut(method, ":"); ok {
		v, err := strconv.Atoi(n)
		if err != nil || v < 1 {
			return 0, fmt.Errorf("method %q: want name:count", method)
		}
		method, window, prefetch = name, v, v
	}
	b.seq++
	base := fmt.Sprintf("bench_dlq_%d_%d", os.Getpid(), b.seq)
	dlq, dest := base+".dlq", base+".work"
	conn, err := amqp.Dial(b.url)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return 0, err
	}
	defer ch.QueueDelete(dlq, false, false, false)
	defer ch.QueueDelete(dest, false, false, false)
	fillStart := time.Now()
	if err := b.declare(ch, conn, dlq, dest); err != nil {
		return 0, fmt.Errorf("fill: %w", err)
	}
	fmt.Fprintf(os.Stderr, "filled %s (%s) in %.1fs\n", dlq, b.queueType, time.Since(fillStart).Seconds())
	start, cpu0 := time.Now(), b.brokerCPU()
	var client time.Duration
	switch method {
	case "dupctl":
		journal := os.TempDir() + "/" + base + ".journal"
		defer os.Remove(journal)
		cmd := exec.Command(b.dupctl, "dlq", "replay", "--queue", dlq, "--yes", "--journal", journal,
			"--window", fmt.Sprint(window), "--amqp-url", b.url, "-o", "json")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("%v: %s", err, tail(out))
		}
		client = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	case "shovel", "shovel-net":
		// amqp:// is the broker-local (direct, in-process) connection the
		// management UI's "Move messages" uses; shovel-net goes through
		// TCP like dupctl, as a shovel to another broker would.
		uri := "amqp://"
		if method == "shovel-net" {
			uri = netURI(b.url)
		}
		def, _ := json.Marshal(map[string]any{
			"src-protocol": "amqp091", "src-uri": uri, "src-queue": dlq,
			"dest-protocol": "amqp091", "dest-uri": uri, "dest-queue": dest,
			"ack-mode": "on-confirm", "src-prefetch-count": prefetch, "src-delete-after": "never",
		})
		if out, err := b.rabbitmqctl("set_parameter", "shovel", base, string(def)).CombinedOutput(); err != nil {
			return 0, fmt.Errorf("set_parameter: %v: %s", err, out)
		}
		// Counted in the shovel's time, as before; printed so a reader can take it out.
		fmt.Fprintf(os.Stderr, "  set_parameter took %.2fs\n", time.Since(start).Seconds())
		defer b.rabbitmqctl("clear_parameter", "shovel", base).Run()
	case "naive":
		out, err := exec.Command(b.naive, "-amqp", b.url, "-from", dlq, "-to", dest).CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("%v: %s", err, tail(out))
		}
	default:
		return 0, fmt.Errorf("unknown method %q", method)
	}
	if err := waitMoved(ch, dlq, dest, b.n); err != nil {
		return 0, err
	}
	took := time.Since(start)
	fmt.Fprintf(os.Stderr, "  CPU during the move: client %.1fs, broker %.1fs\n", client.Seconds(), (b.brokerCPU() - cpu0).Seconds())
	return took, nil
}

// paymentDeadLetter is the i-th message of a DLQ of failed payments: a
// ~220-byte JSON body, the error and an idempotency key in the headers.
func paymentDeadLetter(i int) amqp.Publishing {
	return amqp.Publishing{
		MessageId: fmt.Sprintf("m-%06d", i), ContentType: "application/json",
		Headers: amqp.Table{"x-exception-message": "upstream timed out", "idempotency-key": fmt.Sprintf("payment:%d", i)},
		Body: []byte(fmt.Sprintf(`{"orderId":%d,"type":"payment","amount":"19.99","currency":"EUR","customer":"c-%d","note":"%s"}`, i, i%977,
			strings.Repeat("x", 80))),
	}
}

func waitMoved(ch *amqp.Channel, dlq, dest string, n int) error {
	deadline := time.Now().Add(30 * time.Minute)
	for time.Now().Before(deadline) {
		d, err := ch.QueueDeclarePassive(dest, true, false, false, false, nil)
		if err != nil {
			return err
		}
		s, err := ch.QueueDeclarePassive(dlq, true, false, false, false, nil)
		if err != nil {
			return err
		}
		if d.Messages >= n && s.Messages == 0 {
			if d.Messages != n {
				return fmt.Errorf("destination has %d messages, want %d", d.Messages, n)
			}
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("not moved within 30 minutes")
}

func tail(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 400 {
		s = s[len(s)-400:]
	}
	return s
}

// netURI is the AMQP URL with the default vhost spelled out: in a shovel
// URI an empty path means the vhost "", not "/".
func netURI(u string) string {
	if strings.HasSuffix(u, "/") {
		return u + "%2f"
	}
	return u
}
