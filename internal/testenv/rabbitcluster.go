package testenv

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The RabbitMQ cluster tests start three extra nodes (tens of seconds on
// two cores, a few hundred MB): they run only with DUPCTL_CLUSTER=required,
// which .ci/run sets for one stage, against one cluster it starts with
// .ci/rabbitmq-cluster and describes in these variables.
const (
	clusterURLEnv   = "DUPCTL_TEST_AMQP_CLUSTER_URL"
	clusterNodesEnv = "DUPCTL_TEST_CLUSTER_NODES"
	clusterHomeEnv  = "DUPCTL_TEST_CLUSTER_HOME"
	clusterMgmtEnv  = "DUPCTL_TEST_CLUSTER_MANAGEMENT_URL"
)

// ClusterRequired reports whether the cluster tests must run.
func ClusterRequired() bool {
	return strings.EqualFold(os.Getenv("DUPCTL_CLUSTER"), "required")
}

// RabbitCluster is a 3-node RabbitMQ cluster on loopback, apart from the
// broker on 5672 (names, ports, data and Erlang cookie of its own).
type RabbitCluster struct {
	// URL names every node's address (amqp://guest:guest@h:p1,h:p2,h:p3/).
	URL string
	// Nodes are the nodes in the order of URL's addresses.
	Nodes []RabbitNode
	// Management is node a's management API (http://guest:guest@...).
	Management string
	home       string
}

// RabbitNode is one node of a RabbitCluster.
type RabbitNode struct {
	Name string // dupctl-<tag>-a@localhost
	Addr string // 127.0.0.1:port
	URL  string // amqp://guest:guest@127.0.0.1:port/
}

// NeedRabbitCluster returns the cluster of the cluster tests: the one
// .ci/run started (its variables set), or else one started for this test
// with .ci/rabbitmq-cluster and stopped after it. Without
// DUPCTL_CLUSTER=required the test is skipped. Every node is running when
// it returns (a test that stops one restarts it: StopApp).
func NeedRabbitCluster(t *testing.T) *RabbitCluster {
	t.Helper()
	if !ClusterRequired() {
		t.Skip("starts a 3-node RabbitMQ cluster: set DUPCTL_CLUSTER=required to run it (.ci/run does, in a stage of its own)")
	}
	env := map[string]string{}
	for _, k := range []string{clusterURLEnv, clusterNodesEnv, clusterHomeEnv, clusterMgmtEnv} {
		env[k] = os.Getenv(k)
	}
	if env[clusterURLEnv] == "" {
		env = startRabbitCluster(t)
	}
	c, err := parseCluster(env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Ctl(c.Nodes[0].Name, "await_online_nodes", "3", "--timeout", "5"); err == nil {
		return c
	}
	// A test that failed half-way may have left a node stopped, or killed.
	for _, n := range c.Nodes {
		if _, err := c.Ctl(n.Name, "start_app"); err != nil {
			if rerr := c.script("restart", n.Name); rerr != nil {
				t.Fatalf("start %s: %v; restart it: %v", n.Name, err, rerr)
			}
		}
	}
	if _, err := c.Ctl(c.Nodes[0].Name, "await_online_nodes", "3", "--timeout", "120"); err != nil {
		t.Fatalf("the cluster is not whole: %v", err)
	}
	return c
}

func parseCluster(env map[string]string) (*RabbitCluster, error) {
	c := &RabbitCluster{URL: env[clusterURLEnv], Management: env[clusterMgmtEnv], home: env[clusterHomeEnv]}
	names := strings.Split(env[clusterNodesEnv], ",")
	rest, ok := strings.CutPrefix(c.URL, "amqp://guest:guest@")
	hosts, _, _ := strings.Cut(rest, "/")
	addrs := strings.Split(hosts, ",")
	if !ok || len(addrs) != len(names) || len(names) != 3 || c.home == "" {
		return nil, fmt.Errorf("the cluster variables do not describe 3 nodes: %s=%q %s=%q %s=%q",
			clusterURLEnv, c.URL, clusterNodesEnv, env[clusterNodesEnv], clusterHomeEnv, c.home)
	}
	for i, n := range names {
		c.Nodes = append(c.Nodes, RabbitNode{Name: n, Addr: addrs[i], URL: "amqp://guest:guest@" + addrs[i] + "/"})
	}
	return c, nil
}

// startRabbitCluster starts a cluster for one test with the CI script and
// stops it when the test ends.
func startRabbitCluster(t *testing.T) map[string]string {
	t.Helper()
	script, err := ciScript("rabbitmq-cluster")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "cluster")
	start := time.Now()
	cmd := exec.Command(script, "start", dir)
	out, err := cmd.CombinedOutput()
	t.Cleanup(func() {
		if out, err := exec.Command(script, "stop", dir).CombinedOutput(); err != nil {
			t.Logf("stop the cluster: %v %s", err, out)
		}
	})
	if err != nil {
		t.Fatalf("%s start: %v\n%s", script, err, out)
	}
	t.Logf("RabbitMQ cluster started in %s", time.Since(start).Round(100*time.Millisecond))
	f, err := os.Open(filepath.Join(dir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		}
	}
	return env
}

// ciScript finds .ci/<name> above the working directory (tests run in
// their package's directory).
func ciScript(name string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, ".ci", name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf(".ci/%s not found above the working directory", name)
		}
		dir = up
	}
}

// Ctl runs rabbitmqctl against one node of the cluster (with the
// cluster's own Erlang cookie) and returns its output.
func (c *RabbitCluster) Ctl(node string, args ...string) (string, error) {
	bin := "/usr/lib/rabbitmq/bin/rabbitmqctl"
	if _, err := os.Stat(bin); err != nil {
		// Not the Debian layout: the first on PATH. (Debian's
		// /usr/sbin/rabbitmqctl runs as the rabbitmq user, with its cookie.)
		bin = "rabbitmqctl"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"-n", node}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+c.home, "RABBITMQ_CONF_ENV_FILE="+filepath.Join(c.home, "rabbitmq-env.conf"),
		"ERL_EPMD_ADDRESS=127.0.0.1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("rabbitmqctl -n %s %s: %v: %s", node, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// StopApp stops the RabbitMQ application on a node (the Erlang node stays
// up, its AMQP listener closes: clients get connection refused) and
// restarts it when the test ends if the test did not.
func (c *RabbitCluster) StopApp(t testing.TB, node string) {
	t.Helper()
	if _, err := c.Ctl(node, "stop_app"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := c.Ctl(node, "start_app"); err != nil {
			t.Errorf("restart %s: %v", node, err)
		}
	})
}

// Kill SIGKILLs a node's Erlang VM (.ci/rabbitmq-cluster kill): a crash,
// not a clean stop - the other nodes see it gone at once, its queues'
// consumers and their unacked messages are left as a crash leaves them. It
// returns once the node no longer answers, and restarts it when the test
// ends if the test did not (Restart).
func (c *RabbitCluster) Kill(t testing.TB, node string) {
	t.Helper()
	if err := c.script("kill", node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := c.Ctl(node, "await_startup", "--timeout", "1"); err == nil {
			return
		}
		if err := c.script("restart", node); err != nil {
			t.Errorf("restart %s: %v", node, err)
		}
	})
}

// Restart starts a killed node again (same name, port and data) and waits
// until it has booted.
func (c *RabbitCluster) Restart(t testing.TB, node string) error {
	t.Helper()
	return c.script("restart", node)
}

// script runs .ci/rabbitmq-cluster CMD on this cluster's directory.
func (c *RabbitCluster) script(cmd, node string) error {
	script, err := ciScript("rabbitmq-cluster")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, script, cmd, c.home, node).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s %s: %v: %s", script, cmd, node, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// StartApp starts the RabbitMQ application on a node again and waits for
// it to rejoin.
func (c *RabbitCluster) StartApp(t testing.TB, node string) {
	t.Helper()
	if _, err := c.Ctl(node, "start_app"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Ctl(node, "await_startup", "--timeout", "120"); err != nil {
		t.Fatal(err)
	}
}

// MoveLeader hands a quorum queue's (vhost /) leadership to the node to.
// After a node was killed, RabbitMQ 3.10 keeps the messages its consumers
// had taken, on a consumer they had cancelled, with that consumer until
// the queue's leader changes - even once the node is back; a test that
// counts the queue after a kill moves the leader first.
func (c *RabbitCluster) MoveLeader(queue, to string) error {
	from, err := c.Leader(queue)
	if err != nil {
		return err
	}
	if from == to {
		return nil
	}
	expr := fmt.Sprintf(`{ok,Q}=rabbit_amqqueue:lookup(rabbit_misc:r(<<"/">>,queue,<<"%s">>)), {N,_}=amqqueue:get_pid(Q), `+
		`ra:transfer_leadership({N,'%s'},{N,'%s'}).`, queue, from, to)
	out, err := c.Ctl(from, "eval", expr)
	if err != nil {
		return err
	}
	if strings.TrimSpace(out) != "ok" {
		return fmt.Errorf("transfer the leadership of %s from %s to %s: %s", queue, from, to, strings.TrimSpace(out))
	}
	return nil
}

// ChangeLeader moves a quorum queue's leadership to another node than the
// one leading it now, preferring the order of prefer: a quorum queue
// returns what a dead node's consumers had taken only when its leader
// changes (RabbitMQ 3.10), and a move to the node already leading is none.
func (c *RabbitCluster) ChangeLeader(queue string, prefer ...string) error {
	from, err := c.Leader(queue)
	if err != nil {
		return err
	}
	for _, to := range prefer {
		if to != from {
			return c.MoveLeader(queue, to)
		}
	}
	return fmt.Errorf("change the leader of %s: no node but %s to move it to", queue, from)
}

// Leader is the node that leads a quorum queue now (rabbitmq-queues
// quorum_status would need the queue's vhost too; list_queues says it).
func (c *RabbitCluster) Leader(queue string) (string, error) {
	for _, n := range c.Nodes {
		out, err := c.Ctl(n.Name, "list_queues", "name", "leader", "--quiet", "--no-table-headers")
		if err != nil {
			continue // stopped: ask another
		}
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[0] == queue {
				return f[1], nil
			}
		}
		return "", fmt.Errorf("queue %s not listed by %s", queue, n.Name)
	}
	return "", fmt.Errorf("no node answered")
}
