// Package topology checks a RabbitMQ broker's shape against what the
// lock + idempotency practice requires of a work queue: a dead-letter exchange (by argument or policy)
// whose DLQ exists and is bound, a delivery limit on quorum queues, the
// configured retry queue, and no consumer in auto-ack mode. It reads
// through AMQP (passive declares: existence only) and, when given, the
// management HTTP API (arguments, policies, bindings, consumers). It never
// changes anything.
package topology

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/redact"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Rules of the topology checks.
var (
	RuleQueueMissing = findings.Rule{Code: "TOPO_QUEUE_MISSING", Severity: findings.Error, Since: "v0.1.0",
		Title: "a configured work queue does not exist",
		Doc: "The configuration names a work queue the broker does not have: nothing below it can be checked, " +
			"and its consumers consume nothing.",
		Fix: "Fix the queue name in dupctl.yaml, or declare the queue."}
	RuleNoDLX = findings.Rule{Code: "TOPO_NO_DLX", Severity: findings.Error, Since: "v0.1.0",
		Title: "a work queue has no dead-letter exchange",
		Doc: `A message rejected, expired or past its delivery limit is dropped when its
queue has no dead-letter exchange: the job is lost, and when it is retried by
hand nobody knows what ran. The safe flow: after N attempts, route to a DLQ
carrying the job's context.`,
		Fix: "Set x-dead-letter-exchange on the queue, or a policy with dead-letter-exchange, pointing to an exchange bound to a DLQ."}
	RuleDLXUnrouted = findings.Rule{Code: "TOPO_DLX_UNROUTED", Severity: findings.Error, Since: "v0.1.0",
		Title: "the dead-letter exchange does not route to a DLQ",
		Doc: "The queue names a dead-letter exchange, but it does not exist or no queue is bound to it for the dead-letter " +
			"routing key: dead letters vanish.",
		Fix: "Declare the dead-letter exchange and bind the DLQ to it with the routing key dead letters carry " +
			"(the queue's x-dead-letter-routing-key, or the original routing key)."}
	RuleDLQMissing = findings.Rule{Code: "TOPO_DLQ_MISSING", Severity: findings.Error, Since: "v0.1.0",
		Title: "the configured DLQ does not exist",
		Doc:   "dupctl.yaml names a DLQ for the job, and the broker has no such queue.",
		Fix:   "Declare the DLQ and bind it to the work queue's dead-letter exchange, or fix its name in dupctl.yaml."}
	RuleNoDeliveryLimit = findings.Rule{Code: "TOPO_QUORUM_NO_DELIVERY_LIMIT", Severity: findings.Warn, Since: "v0.1.0",
		Title: "a quorum queue has no delivery limit",
		Doc: `Without a delivery limit a poison message (one that crashes its consumer, or
outlives the consumer timeout) is redelivered forever, and its side effect
may run on every delivery. RabbitMQ 4.0 and later give quorum queues a
default limit of 20, so there only an explicit "unlimited" (-1) counts.`,
		Fix: "Set x-delivery-limit (or a delivery-limit policy) on the quorum queue, with a dead-letter exchange to catch what it rejects."}
	RuleRetryMissing = findings.Rule{Code: "TOPO_RETRY_QUEUE_MISSING", Severity: findings.Warn, Since: "v0.1.0",
		Title: "the configured retry queue does not exist or does not come back",
		Doc: "dupctl.yaml names a retry (delay) queue for backoff; it is missing, or it has no dead-letter exchange " +
			"to send expired messages back to work: retries never return.",
		Fix: "Declare the retry queue with a message TTL (or per-message expiration) and x-dead-letter-exchange " +
			"pointing back to the work exchange."}
	RuleAutoAck = findings.Rule{Code: "TOPO_AUTO_ACK_CONSUMER", Severity: findings.Error, Since: "v0.1.0",
		Title: "a consumer uses auto-ack",
		Doc: `A consumer in auto-ack (no-ack) mode has every message acknowledged when it
is sent: a crash mid-job loses the job, and nothing can be retried. This is
ack-before-work, the LOSS column of the simulation matrix.`,
		Fix: "Consume with manual acks and ack after the status commit."}
	RuleClassicOnCluster = findings.Rule{Code: "TOPO_CLASSIC_QUEUE_ON_CLUSTER", Severity: findings.Warn, Since: "v0.3.0",
		Title: "a work queue or DLQ on a cluster is a classic queue",
		Doc: `On a cluster a classic queue lives on one node (RabbitMQ 4 removed classic
mirroring): while that node is down the queue is gone for publishers and
consumers, and its messages - jobs, or the dead letters kept to replay - are
lost with its disk. Quorum queues are replicated to a majority of nodes, keep
working while one is down, and have the delivery limit that dead-letters a
poison message instead of redelivering it forever.`,
		Fix: "Declare it as a quorum queue (x-queue-type: quorum; a queue's type cannot change: declare a new one " +
			"and move the consumers), with x-delivery-limit and a dead-letter exchange."}
	RuleQueueUnavailable = findings.Rule{Code: "TOPO_QUEUE_UNAVAILABLE", Severity: findings.Error, Since: "v0.3.0",
		Title: "a work queue or DLQ lives on a node that is down",
		Doc: `The queue exists, but its only copy is on a node that is down (a classic
queue) or too few of its members are online (a quorum queue without a
majority): RabbitMQ refuses it to publishers and consumers, and answers a
declare as if it did not exist. Jobs published to it are refused or dropped,
dead letters meant for it are lost, until the node is back.`,
		Fix: "Bring the node back; then declare the queue as a quorum queue, replicated to a majority of nodes, " +
			"so that one node down does not take it away."}
	RuleManagementUnavailable = findings.Rule{Code: "TOPO_NOT_CHECKED", Severity: findings.Info, Since: "v0.1.0",
		Title: "queue arguments, policies and consumers were not checked",
		Doc: "Through AMQP alone dupctl can only see whether queues exist. Dead-letter settings, delivery limits, " +
			"bindings and consumers' ack modes need the management API.",
		Fix: "Pass {ManagementURL} http://user:password@host:15672 (or connections.management_url in dupctl.yaml), " +
			"with the management plugin enabled."}
)

// Rules lists the topology rules.
func Rules() []findings.Rule {
	return []findings.Rule{RuleQueueMissing, RuleNoDLX, RuleDLXUnrouted, RuleDLQMissing, RuleNoDeliveryLimit, RuleRetryMissing, RuleAutoAck,
		RuleClassicOnCluster, RuleQueueUnavailable, RuleManagementUnavailable}
}

// Job is what to check for one work queue.
type Job struct {
	Name       string
	Queue      string
	DLQ        string // optional
	RetryQueue string // optional
}

// QueueInfo is what the management API says about a queue. Its shape
// differs across RabbitMQ versions: 3.x writes an empty
// effective_policy_definition (and, on some versions, empty arguments) as
// [] - or, up to 4.2, as "" - where 4.x writes {}, and policy as null
// where no policy applies; Settings and Text read every one of them.
type QueueInfo struct {
	Name      string     `json:"name"`
	Vhost     string     `json:"vhost"`
	Type      string     `json:"type"`
	Arguments Settings   `json:"arguments"`
	Policy    nullString `json:"policy"`
	Effective Settings   `json:"effective_policy_definition"`
	Consumers int        `json:"consumers"`
	// State is running, down (a classic queue whose node is gone), ...
	State string `json:"state"`
	// Node is where a classic queue lives (a quorum queue's leader);
	// Leader, Members and Online are a quorum queue's nodes.
	Node    string   `json:"node"`
	Leader  string   `json:"leader"`
	Members []string `json:"members"`
	Online  []string `json:"online"`
	// DeliveryLimit is the limit a quorum queue's leader reports in its
	// stats (RabbitMQ 4.x, rabbit_quorum_queue handle_tick): a number -
	// 20 by default since 4.0 - or "unlimited"; absent on 3.x and before
	// the first tick.
	DeliveryLimit json.RawMessage `json:"delivery_limit"`
	Details       []struct {
		AckRequired bool   `json:"ack_required"`
		Tag         string `json:"consumer_tag"`
	} `json:"consumer_details"`
}

// Settings are a queue's arguments or its effective policy: a JSON
// object, or the empty list, empty string or null older brokers write
// for none.
type Settings map[string]any

// UnmarshalJSON reads an object, or [], "", null as no settings.
func (s *Settings) UnmarshalJSON(b []byte) error {
	switch t := strings.TrimSpace(string(b)); {
	case t == "null", t == `""`, strings.HasPrefix(t, "[") && strings.TrimSpace(strings.Trim(t, "[]")) == "":
		*s = Settings{}
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("queue settings: want a JSON object (or [] or \"\" for none): %w", err)
	}
	*s = m
	return nil
}

// nullString is a string the API may write as null.
type nullString string

func (n *nullString) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = ""
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*n = nullString(s)
	return nil
}

// Binding is one binding from the management API.
type Binding struct {
	Source          string `json:"source"`
	Destination     string `json:"destination"`
	DestinationType string `json:"destination_type"`
	RoutingKey      string `json:"routing_key"`
}

// Management is a small read-only client of the RabbitMQ management API.
type Management struct {
	Base   *url.URL
	Vhost  string
	Client *http.Client
}

// NewManagement parses http[s]://user:password@host:15672.
func NewManagement(raw, vhost string) (*Management, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("management URL %s: want http[s]://user:password@host:15672", redact.URL(raw))
	}
	if vhost == "" {
		vhost = "/"
	}
	return &Management{Base: u, Vhost: vhost, Client: &http.Client{Timeout: 10 * time.Second}}, nil
}

// ErrNotFound is a 404 from the management API.
var ErrNotFound = errors.New("not found")

func (m *Management) get(ctx context.Context, path string, out any) error {
	base := *m.Base
	base.User = nil
	// path is already escaped (the vhost "/" is %2F): join as text so it
	// is not escaped twice.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base.String(), "/")+path, nil)
	if err != nil {
		return err
	}
	if m.Base.User != nil {
		pw, _ := m.Base.User.Password()
		req.SetBasicAuth(m.Base.User.Username(), pw)
	}
	resp, err := m.Client.Do(req)
	if err != nil {
		return fmt.Errorf("management API %s: %s", redact.URL(m.Base.String()), redact.String(err.Error()))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return ErrNotFound
	case resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("management API %s: 401 unauthorized: check the user and password", redact.URL(m.Base.String()))
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("management API %s%s: HTTP %d", redact.URL(m.Base.String()), path, resp.StatusCode)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 32<<20)).Decode(out)
}

func (m *Management) vh() string { return url.PathEscape(m.Vhost) }

// Queue reads one queue.
func (m *Management) Queue(ctx context.Context, name string) (*QueueInfo, error) {
	var q QueueInfo
	err := m.get(ctx, "/api/queues/"+m.vh()+"/"+url.PathEscape(name), &q)
	return &q, err
}

// Exchange reports whether an exchange exists.
func (m *Management) Exchange(ctx context.Context, name string) (bool, error) {
	var x map[string]any
	err := m.get(ctx, "/api/exchanges/"+m.vh()+"/"+url.PathEscape(name), &x)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// BindingsFrom lists the bindings whose source is an exchange.
func (m *Management) BindingsFrom(ctx context.Context, exchange string) ([]Binding, error) {
	var bs []Binding
	err := m.get(ctx, "/api/exchanges/"+m.vh()+"/"+url.PathEscape(exchange)+"/bindings/source", &bs)
	return bs, err
}

// Node is one node of the broker's cluster.
type Node struct {
	Name    string `json:"name"`
	Running bool   `json:"running"`
}

// Nodes lists the cluster's nodes (one for a single broker).
func (m *Management) Nodes(ctx context.Context) ([]Node, error) {
	var ns []Node
	err := m.get(ctx, "/api/nodes", &ns)
	return ns, err
}

// placement says on which nodes a queue lives, for evidence.
func placement(q *QueueInfo) string {
	if q.Type == "quorum" && len(q.Members) > 0 {
		leader := "no leader"
		if q.Leader != "" {
			leader = "leader on " + q.Leader
		}
		return fmt.Sprintf("%s, members %s, online %s", leader, strings.Join(q.Members, " "), strings.Join(q.Online, " "))
	}
	if q.Node != "" {
		return "on node " + q.Node
	}
	return "node unknown"
}

// offline are a replicated queue's members that are not online: absent
// from the queue's online list, or on a node the node list says is not
// running (a node not listed is unknown, not counted as down).
func offline(q *QueueInfo, nodes []Node) []string {
	out := []string{}
	for _, n := range q.Members {
		i := slices.IndexFunc(nodes, func(o Node) bool { return o.Name == n })
		if !slices.Contains(q.Online, n) || i >= 0 && !nodes[i].Running {
			out = append(out, n)
		}
	}
	return out
}

// noMajority checks a replicated queue's members: with half of them or
// fewer online, no leader can be elected or commit, so the queue takes no
// publish (no confirm comes) and delivers nothing - while a passive
// declare still finds it and the API may still name a leader and say
// "running" (RabbitMQ 3.10.8 measured, docs/doctor.md).
func noMajority(r *findings.Report, j Job, q *QueueInfo, what string, nodes []Node) {
	n := len(q.Members)
	if (q.Type != "quorum" && q.Type != "stream") || n == 0 || hasFinding(r, RuleQueueUnavailable.Code, q.Name) {
		return
	}
	// Judged from the queue's own member list, so also when the node list
	// was refused (Check registers the rule only with it).
	r.Check(RuleQueueUnavailable.Code)
	off := offline(q, nodes)
	on := slices.DeleteFunc(slices.Clone(q.Members), func(m string) bool { return slices.Contains(off, m) })
	if len(on) > n/2 {
		return
	}
	online := "none"
	if len(on) > 0 {
		online = strings.Join(on, " ")
	}
	leader := "leader: none elected"
	if q.Leader != "" {
		leader = "leader: " + q.Leader + " as the API reports it, which cannot commit without a majority"
	}
	r.Add(RuleQueueUnavailable.New(q.Name, fmt.Sprintf("job %s: %s queue %q (%s) has no majority: %d of its %d members online (%s), "+
		"so it cannot accept or deliver messages until %d are", j.Name, q.Type, q.Name, what, len(on), n, online, n/2+1),
		"members: "+strings.Join(q.Members, " "), "offline: "+strings.Join(off, " "), leader, "state: "+orUnknown(q.State)))
}

func hasFinding(r *findings.Report, code, subject string) bool {
	return slices.ContainsFunc(r.Findings, func(f findings.Finding) bool { return f.Code == code && f.Subject == subject })
}

// checkCluster reads a job's work queue and DLQ on a cluster: one that is
// a classic queue (on a cluster of several nodes), or a replicated one
// without a majority of its members online.
func checkCluster(ctx context.Context, r *findings.Report, m *Management, j Job, nodes []Node) error {
	for _, u := range []struct{ name, what string }{{j.Queue, "work queue"}, {j.DLQ, "DLQ"}} {
		if u.name == "" {
			continue
		}
		q, err := m.Queue(ctx, u.name)
		if errors.Is(err, ErrNotFound) {
			continue // reported as missing
		}
		if err != nil {
			return fmt.Errorf("queue %s: %w", u.name, err)
		}
		if q.Name == "" {
			q.Name = u.name
		}
		if q.Type == "classic" && len(nodes) > 1 {
			r.Add(RuleClassicOnCluster.New(u.name, fmt.Sprintf("job %s: %q is a classic queue on a cluster of %d nodes: it lives on %s only",
				j.Name, u.name, len(nodes), q.Node), placement(q)))
		}
		noMajority(r, j, q, u.what, nodes)
	}
	return nil
}

// checkDefaultRouted checks dead-lettering through the default exchange
// (x-dead-letter-exchange ""), which is common and routes by the routing
// key alone: to the queue the dead-letter routing key names, or without
// one to the queue named by each message's own routing key - the work
// queue itself for messages published to it by name, nowhere for the
// others. (The management API has no "" exchange to read: asking for it
// returned the list of every exchange, and doctor stopped on it.)
func checkDefaultRouted(ctx context.Context, r *findings.Report, m *Management, j Job, where, key string) error {
	if key == "" {
		r.Add(RuleDLXUnrouted.New(j.Queue, fmt.Sprintf("job %s: queue %q dead-letters through the default exchange (%s) "+
			"with no dead-letter routing key: "+
			"each message goes to the queue its own routing key names - back to %q for messages published to it by name, nowhere for the others",
			j.Name, j.Queue, where, j.Queue)))
		return nil
	}
	if _, err := m.Queue(ctx, key); errors.Is(err, ErrNotFound) {
		r.Add(RuleDLXUnrouted.New(j.Queue, fmt.Sprintf("job %s: queue %q dead-letters through the default exchange to %q, which does not exist",
			j.Name, j.Queue, key)))
		return nil
	} else if err != nil {
		return err
	}
	if j.DLQ != "" && key != j.DLQ {
		r.Add(RuleDLXUnrouted.New(j.Queue, fmt.Sprintf("job %s: queue %q dead-letters through the default exchange to %q, not to its DLQ %q",
			j.Name, j.Queue, key, j.DLQ)))
	}
	return nil
}

// setting reads a queue setting from its arguments (x-<name>) or its
// effective policy (<name>); arguments win, as in RabbitMQ.
func setting(q *QueueInfo, name string) (any, string) {
	if v, ok := q.Arguments["x-"+name]; ok {
		return v, "argument x-" + name
	}
	if v, ok := q.Effective[name]; ok {
		return v, "policy " + string(q.Policy)
	}
	return nil, ""
}

// Prober checks queue existence through AMQP: a passive declare, on a
// fresh channel each time because a failed one closes the channel.
type Prober struct{ Conn *amqp.Connection }

// Exists reports whether a queue exists, and its message count.
func (p Prober) Exists(name string) (bool, int, error) {
	ch, err := p.Conn.Channel()
	if err != nil {
		return false, 0, fmt.Errorf("open channel: %w", err)
	}
	q, err := ch.QueueDeclarePassive(name, false, false, false, false, nil)
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.NotFound {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, fmt.Errorf("passive declare %s: %w", name, err)
	}
	ch.Close()
	return true, q.Messages, nil
}

// Check runs the topology checks for jobs. mgmt may be nil.
func Check(ctx context.Context, p Prober, mgmt *Management, jobs []Job) (*findings.Report, error) {
	r := &findings.Report{Command: "topology"}
	r.Check(RuleQueueMissing.Code, RuleDLQMissing.Code, RuleRetryMissing.Code)
	if mgmt == nil {
		r.Check(RuleManagementUnavailable.Code)
		r.Add(RuleManagementUnavailable.New("broker", "checked queue existence only (AMQP)"))
	} else {
		r.Check(RuleNoDLX.Code, RuleDLXUnrouted.Code, RuleNoDeliveryLimit.Code, RuleAutoAck.Code)
	}
	// Whether the broker is a cluster: the node list needs the management
	// user's monitoring tag; without it the check is left out.
	var nodes []Node
	if mgmt != nil {
		if ns, err := mgmt.Nodes(ctx); err == nil {
			nodes = ns
			r.Check(RuleClassicOnCluster.Code, RuleQueueUnavailable.Code)
		}
	}
	var downs downQueues
	for _, j := range jobs {
		ok, depth, err := p.Exists(j.Queue)
		if err != nil {
			return nil, err
		}
		if !ok {
			if !downs.add(ctx, r, mgmt, j, j.Queue, "queue") {
				r.Add(RuleQueueMissing.New(j.Queue, fmt.Sprintf("job %s: queue %q does not exist", j.Name, j.Queue)))
			}
			continue
		}
		if j.DLQ != "" {
			if ok, _, err := p.Exists(j.DLQ); err != nil {
				return nil, err
			} else if !ok && !downs.add(ctx, r, mgmt, j, j.DLQ, "DLQ") {
				r.Add(RuleDLQMissing.New(j.DLQ, fmt.Sprintf("job %s: DLQ %q does not exist", j.Name, j.DLQ)))
			}
		}
		if j.RetryQueue != "" {
			if ok, _, err := p.Exists(j.RetryQueue); err != nil {
				return nil, err
			} else if !ok {
				r.Add(RuleRetryMissing.New(j.RetryQueue, fmt.Sprintf("job %s: retry queue %q does not exist", j.Name, j.RetryQueue)))
			} else if mgmt != nil {
				rq, err := mgmt.Queue(ctx, j.RetryQueue)
				if err != nil {
					return nil, err
				}
				if v, _ := setting(rq, "dead-letter-exchange"); v == nil {
					r.Add(RuleRetryMissing.New(j.RetryQueue, fmt.Sprintf(
						"job %s: retry queue %q has no dead-letter exchange: expired retries never return to work", j.Name, j.RetryQueue)))
				}
			}
		}
		if mgmt != nil {
			if err := checkQueue(ctx, r, mgmt, j, depth); err != nil {
				return nil, err
			}
		}
		// A cluster, or nodes not listed: a quorum queue's members say
		// whether it has its majority.
		if mgmt != nil && len(nodes) != 1 {
			if err := checkCluster(ctx, r, mgmt, j, nodes); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

// noDeliveryLimit says why a quorum queue has no delivery limit, or "":
// one set by argument or policy (-1 is unlimited), else the limit its
// leader reports - RabbitMQ 4.0 gave quorum queues a default of 20
// (release notes 4.0.1, "Quorum Queues Now Have a Default Redelivery
// Limit"), so no argument is no finding there.
func noDeliveryLimit(q *QueueInfo) string {
	if v, where := setting(q, "delivery-limit"); v != nil {
		if n, ok := v.(float64); ok && n < 0 {
			return fmt.Sprintf("%s = %v: unlimited", where, v)
		}
		return ""
	}
	var reported any
	if len(q.DeliveryLimit) > 0 && json.Unmarshal(q.DeliveryLimit, &reported) == nil {
		if n, ok := reported.(float64); ok && n > 0 {
			return "" // the broker's default (RabbitMQ 4.x)
		}
		return fmt.Sprintf("no x-delivery-limit argument or delivery-limit policy; the queue reports delivery_limit %v", reported)
	}
	return "no x-delivery-limit argument or delivery-limit policy, and the broker reports no default (RabbitMQ 3.x)"
}

func checkQueue(ctx context.Context, r *findings.Report, m *Management, j Job, depth int) error {
	q, err := m.Queue(ctx, j.Queue)
	if err != nil {
		return fmt.Errorf("queue %s: %w", j.Queue, err)
	}
	dlx, where := setting(q, "dead-letter-exchange")
	dlxName, _ := dlx.(string)
	if dlx == nil {
		r.Add(RuleNoDLX.New(j.Queue, fmt.Sprintf("job %s: queue %q (%s, %d messages) has no dead-letter exchange by argument or policy",
			j.Name, j.Queue, q.Type, depth),
			fmt.Sprintf("arguments: %v", q.Arguments), fmt.Sprintf("policy: %q %v", q.Policy, q.Effective)))
	} else {
		rk, _ := setting(q, "dead-letter-routing-key")
		if err := checkRouted(ctx, r, m, j, dlxName, where, rk); err != nil {
			return err
		}
	}
	if q.Type == "quorum" {
		if why := noDeliveryLimit(q); why != "" {
			r.Add(RuleNoDeliveryLimit.New(j.Queue, fmt.Sprintf("job %s: quorum queue %q has no delivery limit", j.Name, j.Queue), why,
				placement(q)))
		}
	}
	for _, c := range q.Details {
		if !c.AckRequired {
			r.Add(RuleAutoAck.New(j.Queue, fmt.Sprintf("job %s: consumer %q on %q uses auto-ack", j.Name, c.Tag, j.Queue)))
		}
	}
	return nil
}

func checkRouted(ctx context.Context, r *findings.Report, m *Management, j Job, dlx, where string, rk any) error {
	if dlx == "" {
		key, _ := rk.(string)
		return checkDefaultRouted(ctx, r, m, j, where, key)
	}
	ok, err := m.Exchange(ctx, dlx)
	if err != nil {
		return err
	}
	if !ok {
		r.Add(RuleDLXUnrouted.New(j.Queue, fmt.Sprintf("job %s: dead-letter exchange %q (%s) does not exist", j.Name, dlx, where)))
		return nil
	}
	bs, err := m.BindingsFrom(ctx, dlx)
	if err != nil {
		return err
	}
	key, _ := rk.(string)
	for _, b := range bs {
		if b.DestinationType != "queue" {
			continue
		}
		if j.DLQ != "" && b.Destination != j.DLQ {
			continue
		}
		// Any binding routes a fanout; for direct/topic, either the
		// configured dead-letter routing key or (when none) the original
		// keys: accept a binding on the key, "#", or an empty key.
		if key == "" || b.RoutingKey == key || b.RoutingKey == "#" || b.RoutingKey == "" {
			return nil
		}
	}
	target := "any queue"
	if j.DLQ != "" {
		target = "DLQ " + j.DLQ
	}
	r.Add(RuleDLXUnrouted.New(j.Queue, fmt.Sprintf("job %s: dead-letter exchange %q (%s) is not bound to %s", j.Name, dlx, where, target)))
	return nil
}
