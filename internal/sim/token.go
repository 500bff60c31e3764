package sim

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/dupctl/dupctl/internal/worker"
)

// tokenVersion changes whenever the engine's semantics change, so an old
// token is refused instead of replaying something else.
const tokenVersion = "dsim1"

// Replay is everything needed to re-run one schedule bit for bit.
type Schedule struct {
	Scenario string
	Config   Config
	Seed     uint64
	Actions  []Action
	// Expected says the command that printed the token showed this
	// schedule as the scenario's expected demonstration (an info
	// finding), so its replay reports it at the same severity.
	Expected bool
}

// profileCode packs a profile's switches into ten digits.
func profileCode(p worker.Profile) string {
	b := func(v bool) byte {
		if v {
			return '1'
		}
		return '0'
	}
	return string([]byte{b(p.Lock), '0' + byte(p.LockKey), '0' + byte(p.Unlock), b(p.Renew), b(p.Fence),
		'0' + byte(p.Idem), '0' + byte(p.Key), '0' + byte(p.StatusFrom), '0' + byte(p.StatusWrite), '0' + byte(p.Ack)})
}

func parseProfileCode(s string) (worker.Profile, error) {
	if len(s) != 10 {
		return worker.Profile{}, fmt.Errorf("bad profile code %q", s)
	}
	d := func(i int, max byte) (uint8, error) {
		if s[i] < '0' || s[i] > '0'+max {
			return 0, fmt.Errorf("bad profile code %q", s)
		}
		return s[i] - '0', nil
	}
	var v [10]uint8
	maxes := [10]byte{1, 1, 1, 1, 1, 3, 1, 2, 1, 1}
	for i := range v {
		x, err := d(i, maxes[i])
		if err != nil {
			return worker.Profile{}, err
		}
		v[i] = x
	}
	p := worker.Profile{Lock: v[0] == 1, LockKey: worker.LockKey(v[1]), Unlock: worker.Unlock(v[2]), Renew: v[3] == 1, Fence: v[4] == 1,
		Idem: worker.Idem(v[5]), Key: worker.KeyMode(v[6]), StatusFrom: worker.StatusFrom(v[7]), StatusWrite: worker.StatusWrite(v[8]),
		Ack: worker.AckMode(v[9])}
	p.Name = "custom"
	for _, named := range worker.Profiles() {
		if profileCode(named) == s {
			p = named
		}
	}
	return p, nil
}

var actionLetters = map[int]byte{aStep: 's', aFail: 'f', aCrash: 'c', aPause: 'p', aDrop: 'd', aDup: 'u', aTick: 't', aStop: 'x',
	aFailover: 'o'}

// replicaLagField is ".rlag<ms>" for a profile that reads status from a
// replica, else "": the tokens of every other profile stay as they were
// before replicas existed, and replay in both versions.
func replicaLagField(c Config) string {
	if c.Profile.StatusFrom != worker.StatusReplica {
		return ""
	}
	return ".rlag" + strconv.FormatInt(c.ReplicaLag, 10)
}

// Token encodes a schedule as one copy-pasteable string.
func (r Schedule) Token() string {
	c := r.Config
	f := c.Faults
	var acts []string
	for _, a := range r.Actions {
		s := string(actionLetters[a.Kind()])
		if k := a.Kind(); k != aTick && k != aStop {
			s += strconv.Itoa(int(a & 0xffffff))
		}
		acts = append(acts, s)
	}
	fields := []string{
		tokenVersion, r.Scenario, profileCode(c.Profile),
		fmt.Sprintf("w%d.j%d.k%d.ttl%d.ack%d.pause%d.lag%d.back%d.att%d.ren%d.max%d.jit%d.dupat%d.dl%d",
			c.Workers, c.Jobs, c.Keys, c.LockTTL, c.AckTimeout, c.PauseFor, c.CacheLag, c.BackoffBase, c.MaxAttempts, c.MaxRenewals,
			c.MaxSteps, c.JitterPercent, c.DupAt, c.DeliveryLimit) +
			replicaLagField(c),
		fmt.Sprintf("c%d.%d.p%d.%d.d%d.u%d.f%d", f.Crash, f.CrashAt, f.Pause, f.PauseAt, f.DropAck, f.DupPublish, f.EffectFail),
		c.Duration.String(),
		strconv.FormatUint(r.Seed, 10),
		strings.Join(acts, "."),
	}
	if r.Expected {
		fields = append(fields, "expected")
	}
	return tokenVersion + "_" + base64.RawURLEncoding.EncodeToString([]byte(strings.Join(fields, "|")))
}

// ParseToken decodes a token written by Token.
func ParseToken(tok string) (Schedule, error) {
	fields, err := tokenFields(tok)
	if err != nil {
		return Schedule{}, err
	}
	sc, c, err := tokenConfig(fields)
	if err != nil {
		return Schedule{}, err
	}
	seed, err := strconv.ParseUint(fields[6], 10, 64)
	if err != nil {
		return Schedule{}, badToken("seed")
	}
	r := Schedule{Scenario: sc.Name, Config: c, Seed: seed, Expected: len(fields) == 9}
	if r.Actions, err = tokenActions(fields[7]); err != nil {
		return Schedule{}, err
	}
	return r, nil
}

func badToken(why string) error {
	return fmt.Errorf("replay token is not valid (%s): copy it whole from the simulate output", why)
}

// tokenFields are a token's fields, once its version is this one.
func tokenFields(tok string) ([]string, error) {
	tok = strings.TrimSpace(tok)
	prefix, body, ok := strings.Cut(tok, "_")
	if !ok || !strings.HasPrefix(prefix, "dsim") {
		return nil, badToken("no dsim prefix")
	}
	if prefix != tokenVersion {
		return nil, fmt.Errorf("replay token is version %s; this dupctl replays %s tokens: use the dupctl that printed it", prefix, tokenVersion)
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return nil, badToken("not base64url")
	}
	fields := strings.Split(string(raw), "|")
	// A ninth field marks the expected demonstration; tokens without it
	// (and those printed before it existed) replay as chosen schedules.
	if len(fields) < 8 || len(fields) > 9 || fields[0] != tokenVersion || (len(fields) == 9 && fields[8] != "expected") {
		return nil, badToken("wrong number of fields")
	}
	return fields, nil
}

// tokenConfig reads a token's scenario and config fields.
func tokenConfig(fields []string) (*Scenario, Config, error) {
	sc, err := ScenarioByName(fields[1])
	if err != nil {
		return nil, Config{}, badToken("unknown scenario")
	}
	p, err := parseProfileCode(fields[2])
	if err != nil {
		return nil, Config{}, badToken(err.Error())
	}
	c := sc.Config(p)
	var crashAt, pauseAt uint16
	var att, ren, dl uint8
	system, replica, hasReplica := strings.Cut(fields[3], ".rlag")
	if _, err := fmt.Sscanf(system, "w%d.j%d.k%d.ttl%d.ack%d.pause%d.lag%d.back%d.att%d.ren%d.max%d.jit%d.dupat%d.dl%d",
		&c.Workers, &c.Jobs, &c.Keys, &c.LockTTL, &c.AckTimeout, &c.PauseFor, &c.CacheLag, &c.BackoffBase, &att, &ren, &c.MaxSteps,
		&c.JitterPercent, &c.DupAt, &dl); err != nil {
		return nil, Config{}, badToken("config")
	}
	if hasReplica {
		lag, err := strconv.ParseInt(replica, 10, 64)
		if err != nil || p.StatusFrom != worker.StatusReplica {
			return nil, Config{}, badToken("config") // Token writes a replica lag only for a replica profile
		}
		c.ReplicaLag = lag
	}
	c.MaxAttempts, c.MaxRenewals, c.DeliveryLimit = att, ren, dl
	if _, err := fmt.Sscanf(fields[4], "c%d.%d.p%d.%d.d%d.u%d.f%d", &c.Faults.Crash, &crashAt, &c.Faults.Pause, &pauseAt, &c.Faults.DropAck,
		&c.Faults.DupPublish, &c.Faults.EffectFail); err != nil {
		return nil, Config{}, badToken("faults")
	}
	c.Faults.CrashAt, c.Faults.PauseAt = worker.Points(crashAt), worker.Points(pauseAt)
	if c.Duration, err = ParseDist(fields[5]); err != nil {
		return nil, Config{}, badToken("duration")
	}
	if err := c.Validate(); err != nil {
		return nil, Config{}, badToken(err.Error())
	}
	return sc, c, nil
}

// tokenActions reads a token's schedule field.
func tokenActions(field string) ([]Action, error) {
	if field == "" {
		return nil, nil
	}
	var actions []Action
	for _, s := range strings.Split(field, ".") {
		if s == "" {
			return nil, badToken("empty action")
		}
		kind := 0
		for k, l := range actionLetters {
			if l == s[0] {
				kind = k
			}
		}
		if kind == 0 {
			return nil, badToken("unknown action")
		}
		if (kind == aTick || kind == aStop) && len(s) > 1 {
			return nil, badToken("action argument") // Token writes none for these
		}
		arg := 0
		if len(s) > 1 {
			var err error
			if arg, err = strconv.Atoi(s[1:]); err != nil || arg < 0 || arg >= 1<<24 {
				return nil, badToken("action argument")
			}
		}
		actions = append(actions, act(kind, arg))
	}
	return actions, nil
}
