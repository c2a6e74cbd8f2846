// Package probe checks a webhook receiver from outside: it sends the receiver the
// deliveries a Standard Webhooks receiver must tell apart (a valid one, a repeat, stale and
// future timestamps, wrong and missing signatures, a rotation's two signatures, an unknown
// signature version, a 1 MiB body) and reports, for each, whether the receiver answered
// as it should. It sends through the same guarded client as deliveries (package egress),
// so the same address rules hold.
package probe

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/webhook"
	"github.com/platform-payments/payments/internal/webhook/egress"
)

// Outcomes of a case.
const (
	Pass       = "pass"
	Fail       = "fail"
	CannotTell = "cannot tell" // what the case is about cannot be seen from outside
)

// Skew is how far from now the stale and the future timestamps are: twice the usual
// tolerance of 5 minutes, so that a receiver with any sensible tolerance refuses them.
const Skew = 10 * time.Minute

// LargeBody is the size of the large delivery's body: 1 MiB, more than any event of this
// service, which a receiver should accept.
const LargeBody = 1 << 20

// EventType is the type of the events the probe sends, as the service's test event has it.
const EventType = "webhook.test"

// Result is what came of one case.
type Result struct {
	Case    string `json:"case"`
	Expect  string `json:"expect"`  // "2xx" or "refusal (4xx)"
	Outcome string `json:"outcome"` // Pass, Fail or CannotTell
	Status  int    `json:"status"`  // the receiver's status; 0 without an answer
	Detail  string `json:"detail"`  // why, in a few words
}

// Config is what a probe needs.
type Config struct {
	URL string
	// Key signs the deliveries: the receiver's whsec_ secret, or a whsk_ private key
	// whose public key the receiver holds.
	Key webhook.Secret
	// Client sends them: egress.NewClient over webhook.NewDialer, with the allowed ranges.
	Client *http.Client
	// Now is the clock of the timestamps; nil: time.Now.
	Now func() time.Time
}

// A case: how to make its delivery and what the receiver should answer.
type probeCase struct {
	name   string
	refuse bool // the receiver should refuse it (4xx); else accept it (2xx)
	// build returns the headers and body; id is a fresh webhook-id, now the clock.
	build func(id string, now time.Time, key webhook.Secret) (map[string][]string, []byte)
}

// Run sends the cases to cfg.URL one after the other and returns their results, in the
// order sent. It stops early only when ctx ends.
func Run(ctx context.Context, cfg Config) []Result {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	var first struct {
		id   string
		body []byte
	}
	signed := func(id string, at time.Time, body []byte, key webhook.Secret) map[string][]string {
		return webhook.Headers(id, at, body, key)
	}
	cases := []probeCase{
		{name: "valid delivery", build: func(id string, t time.Time, k webhook.Secret) (map[string][]string, []byte) {
			first.id, first.body = id, event(id, t, "valid delivery", 0)
			return signed(id, t, first.body, k), first.body
		}},
		{name: "same webhook-id again", build: func(_ string, t time.Time, k webhook.Secret) (map[string][]string, []byte) {
			return signed(first.id, t, first.body, k), first.body // a retry: same id and body, a new attempt
		}},
		{name: "timestamp 10 minutes old", refuse: true, build: func(id string, t time.Time, k webhook.Secret) (map[string][]string, []byte) {
			body := event(id, t, "timestamp 10 minutes old", 0)
			return signed(id, t.Add(-Skew), body, k), body
		}},
		{name: "timestamp 10 minutes ahead", refuse: true, build: func(id string, t time.Time, k webhook.Secret) (map[string][]string, []byte) {
			body := event(id, t, "timestamp 10 minutes ahead", 0)
			return signed(id, t.Add(Skew), body, k), body
		}},
		{name: "wrong signature", refuse: true, build: func(id string, t time.Time, k webhook.Secret) (map[string][]string, []byte) {
			body := event(id, t, "wrong signature", 0)
			h := signed(id, t, body, k)
			h[key(webhook.HeaderSignature)] = []string{wrongSignature(k)}
			return h, body
		}},
		{name: "no signature", refuse: true, build: func(id string, t time.Time, k webhook.Secret) (map[string][]string, []byte) {
			body := event(id, t, "no signature", 0)
			h := signed(id, t, body, k)
			delete(h, key(webhook.HeaderSignature))
			return h, body
		}},
		{name: "valid signature beside a stale one", build: func(id string, t time.Time, k webhook.Secret) (map[string][]string, []byte) {
			body := event(id, t, "valid signature beside a stale one", 0)
			h := signed(id, t, body, k)
			h[key(webhook.HeaderSignature)] = []string{wrongSignature(k) + " " + h[key(webhook.HeaderSignature)][0]}
			return h, body
		}},
		{name: "unknown v2 signature beside a valid one", build: func(id string, t time.Time, k webhook.Secret) (map[string][]string, []byte) {
			body := event(id, t, "unknown v2 signature beside a valid one", 0)
			h := signed(id, t, body, k)
			h[key(webhook.HeaderSignature)] = []string{"v2," + randomBase64(32) + " " + h[key(webhook.HeaderSignature)][0]}
			return h, body
		}},
		{name: "1 MiB body", build: func(id string, t time.Time, k webhook.Secret) (map[string][]string, []byte) {
			body := event(id, t, "1 MiB body", LargeBody)
			return signed(id, t, body, k), body
		}},
	}
	var out []Result
	for _, c := range cases {
		if ctx.Err() != nil {
			break
		}
		t := now()
		h, body := c.build(newID(), t, cfg.Key)
		h[key("Content-Type")] = []string{"application/json"}
		h[key("User-Agent")] = []string{"paymentsd-webhook-probe"}
		a := egress.Post(ctx, cfg.Client, cfg.URL, h, body, now)
		out = append(out, judge(c, a))
		if c.name == "same webhook-id again" {
			out = append(out, Result{
				Case: "same webhook-id processed once", Expect: "acted on once", Outcome: CannotTell, Status: a.StatusCode,
				Detail: "whether the receiver acted on " + first.id + " twice cannot be seen from outside: it should keep the webhook-ids it has processed",
			})
		}
	}
	return out
}

// judge says whether the answer a is what case c expects.
func judge(c probeCase, a egress.Attempt) Result {
	r := Result{Case: c.name, Expect: "2xx", Status: a.StatusCode}
	if c.refuse {
		r.Expect = "refusal (4xx)"
	}
	switch {
	case a.StatusCode == 0:
		r.Outcome, r.Detail = Fail, "no answer: "+a.Error
	case !c.refuse && a.Succeeded():
		r.Outcome, r.Detail = Pass, fmt.Sprintf("accepted (%d)", a.StatusCode)
	case !c.refuse:
		r.Outcome, r.Detail = Fail, fmt.Sprintf("refused (%d): a delivery the receiver must accept", a.StatusCode)
	case a.StatusCode >= 400 && a.StatusCode <= 499:
		r.Outcome, r.Detail = Pass, fmt.Sprintf("refused (%d)", a.StatusCode)
	case a.Succeeded():
		r.Outcome, r.Detail = Fail, fmt.Sprintf("accepted (%d): a delivery the receiver must refuse", a.StatusCode)
	default:
		r.Outcome, r.Detail = Fail, fmt.Sprintf("answered %d: a refusal should be 4xx (the sender retries a 5xx, and a 3xx is not followed)", a.StatusCode)
	}
	return r
}

// event returns the body of an event of EventType whose data names the case, padded with
// spaces inside data to size bytes when size is larger than it.
func event(id string, t time.Time, name string, size int) []byte {
	b, _ := json.Marshal(map[string]any{ // of strings: never fails
		"id": id, "type": EventType, "timestamp": t.UTC().Format(time.RFC3339Nano),
		"data": map[string]any{"probe": name},
	})
	if pad := size - len(b); pad > 0 {
		// {"data":{"probe":"…"}, …}: the spaces go after the object's opening brace.
		b = append(append([]byte("{"), []byte(strings.Repeat(" ", pad))...), b[1:]...)
	}
	return b
}

// wrongSignature returns a signature of the key's version that is no delivery's.
func wrongSignature(k webhook.Secret) string {
	if k.Asymmetric() {
		return "v1a," + randomBase64(64)
	}
	return "v1," + randomBase64(32)
}

func randomBase64(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (Go 1.24+)
	return base64.StdEncoding.EncodeToString(b)
}

// newID returns a fresh webhook-id: a time-ordered UUID, as the service's event ids are.
func newID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}

// key is the canonical form of a header name, as webhook.Headers keys them.
func key(name string) string { return http.CanonicalHeaderKey(name) }

// Failed reports whether any result failed.
func Failed(results []Result) bool {
	for _, r := range results {
		if r.Outcome == Fail {
			return true
		}
	}
	return false
}
