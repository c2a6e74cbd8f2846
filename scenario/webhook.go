package scenario

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/platform-payments/payments/internal/command"
	"github.com/platform-payments/payments/internal/webhook"
)

// The webhook receiver of a script: a server on the loopback address that records every
// delivery the payments server sends it, verifies each under the secrets the script has
// seen, and answers as webhook listen told it. webhook expect and webhook count look at
// what it received.

// receiverPath is the path of $WEBHOOK_URL. The receiver records a request to any path.
const receiverPath = "/hook"

// maxDeliveryBody is the most of a delivery's body the receiver reads and keeps.
const maxDeliveryBody = 1 << 20

// defaultWithin is how long webhook expect waits when -within is not given.
const defaultWithin = 10 * time.Second

// delivery is one request the receiver received.
type delivery struct {
	n      int // its place in arrival order, from 1
	at     time.Time
	method string
	path   string
	header http.Header
	body   []byte
	typ    string // the event's "type", "" when the body has none
	id     string // the event's "id", else webhook-id
	// verified: the signature verifies under a secret the script knows; else why
	// not, in why.
	verified bool
	why      string
	status   int  // the status the receiver answered
	taken    bool // a webhook expect has returned it
	// checkErr is what CheckDeliveries' check said of it; reported, that a command
	// failed the script with it.
	checkErr error
	reported bool
}

// webhooks is a script's webhook side: the secrets it has seen and its receiver. The
// receiver's handler runs on the server's goroutines, the commands on the script's: mu
// guards everything.
type webhooks struct {
	mu      sync.Mutex
	secrets []webhook.Secret
	srv     *httptest.Server // nil until webhook listen
	started time.Time
	status  int // the answer to a delivery, once the failures are spent
	fail    int // how many more deliveries are answered 500
	got     []*delivery
	// arrived is closed, and replaced, when a delivery arrives or a secret is learned.
	arrived chan struct{}
	// check, when set, checks every delivery as it arrives (CheckDeliveries).
	check func(header http.Header, body []byte) error
}

func newWebhooks() *webhooks {
	return &webhooks{arrived: make(chan struct{})}
}

// learnSecrets adds to the secrets the script knows the webhook secret body holds, if
// any: a JSON object with a member "secret", at its top level or in its "data" object,
// whose value is a whsec_ secret, or a member "public_key" whose value is an ed25519
// endpoint's whpk_ key. An API answer or a command's printed JSON is given
// here, so that the endpoint's secret, and the new one when it is rotated, are known
// once seen. Old secrets are kept: while a rotated secret is live, deliveries are signed
// under both. A body that holds none changes nothing.
func (st *state) learnSecrets(body []byte) {
	st.webhooks.learn(body)
}

// webhookURL returns $WEBHOOK_URL, the receiver's URL (http://127.0.0.1:PORT/hook), or
// "" before the script's first webhook listen.
func (st *state) webhookURL() string {
	return st.webhooks.url()
}

// learn adds the secret body holds, if any (see learnSecrets), and verifies again under
// it the deliveries that did not verify.
func (w *webhooks) learn(body []byte) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return
	}
	var doc struct {
		Secret    any `json:"secret"`
		PublicKey any `json:"public_key"`
		Data      any `json:"data"`
	}
	if json.Unmarshal(body, &doc) != nil {
		return
	}
	found := []any{doc.Secret, doc.PublicKey}
	if data, ok := doc.Data.(map[string]any); ok {
		found = append(found, data["secret"], data["public_key"])
	}
	for _, v := range found {
		text, ok := v.(string)
		if !ok || !strings.HasPrefix(text, "whsec_") && !strings.HasPrefix(text, "whpk_") {
			continue
		}
		secret, err := webhook.ParseSecret(text)
		if err != nil {
			continue
		}
		w.addSecret(secret)
	}
}

// addSecret adds secret to those the script knows, unless it is known already.
func (w *webhooks) addSecret(secret webhook.Secret) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.secrets {
		if s.Text() == secret.Text() {
			return
		}
	}
	w.secrets = append(w.secrets, secret)
	for _, d := range w.got {
		if !d.verified {
			w.verify(d) // at its arrival time: it was signed then
		}
	}
	w.signal()
}

// verify sets d.verified, and d.why, from d's headers and body under the known
// secrets, as at d's arrival. The caller holds mu.
func (w *webhooks) verify(d *delivery) {
	if len(w.secrets) == 0 {
		d.verified, d.why = false, "no webhook secret known to the script"
		return
	}
	for _, s := range w.secrets {
		err := webhook.Verify(s, d.header, d.body, webhook.DefaultTolerance, d.at)
		if err == nil {
			d.verified, d.why = true, ""
			return
		}
		d.why = err.Error()
	}
	d.verified = false
}

// signal wakes the commands waiting for a delivery. The caller holds mu.
func (w *webhooks) signal() {
	close(w.arrived)
	w.arrived = make(chan struct{})
}

// listen starts the receiver, or reconfigures the running one: it answers status to each
// delivery, after 500 to the next fail ones. What it received is kept. It returns the
// receiver's URL.
func (w *webhooks) listen(fail, status int) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fail, w.status = fail, status
	if w.srv == nil {
		w.srv = httptest.NewServer(http.HandlerFunc(w.receive)) // 127.0.0.1 only
		w.started = time.Now()
	}
	return w.srv.URL + receiverPath
}

// url returns the receiver's URL, or "" when there is no receiver.
func (w *webhooks) url() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.srv == nil {
		return ""
	}
	return w.srv.URL + receiverPath
}

// close stops the receiver, waiting for the requests it is answering.
func (w *webhooks) close() {
	w.mu.Lock()
	srv := w.srv
	w.srv = nil
	w.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// receive records a delivery, verifies it and answers it.
func (w *webhooks) receive(rw http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, maxDeliveryBody))
	if err != nil {
		http.Error(rw, "reading the body: "+err.Error(), http.StatusBadRequest)
		return
	}
	d := &delivery{
		at:     time.Now(),
		method: req.Method,
		path:   req.URL.Path,
		header: req.Header.Clone(),
		body:   body,
	}
	d.typ, d.id = eventOf(body, req.Header)
	w.mu.Lock()
	check := w.check
	w.mu.Unlock()
	if check != nil {
		d.checkErr = check(d.header.Clone(), body)
	}

	w.mu.Lock()
	w.verify(d)
	d.status = w.status
	if w.fail > 0 {
		w.fail--
		d.status = http.StatusInternalServerError
	}
	d.n = len(w.got) + 1
	w.got = append(w.got, d)
	w.signal()
	w.mu.Unlock()

	if d.status == http.StatusInternalServerError {
		http.Error(rw, "failing as told (webhook listen -fail)", d.status)
		return
	}
	rw.WriteHeader(d.status)
}

// eventOf returns the type and id of the event a delivery's body holds; the id is the
// webhook-id header's when the body has none.
func eventOf(body []byte, header http.Header) (typ, id string) {
	var event struct {
		ID   any `json:"id"`
		Type any `json:"type"`
	}
	if json.Unmarshal(body, &event) == nil {
		typ, _ = event.Type.(string)
		id, _ = event.ID.(string)
	}
	if id == "" {
		id = header.Get(webhook.HeaderID)
	}
	return typ, id
}

// setCheck sets the check of every delivery (CheckDeliveries).
func (w *webhooks) setCheck(check func(header http.Header, body []byte) error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.check = check
}

// refused returns a failure message naming the first delivery the check refused that no
// command has reported yet, with what the check said and the body, and how many more were
// refused; "" when there is none. Every refused delivery is reported from then on.
func (w *webhooks) refused() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var first *delivery
	more := 0
	for _, d := range w.got {
		if d.checkErr == nil || d.reported {
			continue
		}
		d.reported = true
		if first == nil {
			first = d
		} else {
			more++
		}
	}
	if first == nil {
		return ""
	}
	msg := fmt.Sprintf("webhook delivery refused by the check of deliveries\n    delivery: %s\n    error:    %s\n    body:\n%s",
		w.describe(first), first.checkErr, showBody(first.body))
	if more > 0 {
		msg += fmt.Sprintf("\n    and %d more deliver%s refused", more, plural(more, "y", "ies"))
	}
	return msg
}

// failRefused fails the script when the check refused a delivery not yet reported.
func (w *webhooks) failRefused(ts *testscript.TestScript) {
	if msg := w.refused(); msg != "" {
		ts.Fatalf("%s", msg)
	}
}

// find returns the oldest verified delivery of typ that no webhook expect has returned,
// marked taken when take is set, or nil. The caller holds mu.
func (w *webhooks) find(typ string, take bool) *delivery {
	for _, d := range w.got {
		if d.typ == typ && d.verified && !d.taken {
			if take {
				d.taken = true
			}
			return d
		}
	}
	return nil
}

// await waits up to within for a verified delivery of typ not yet taken, and returns
// it, taken when take is set; nil when none arrives in time.
func (w *webhooks) await(typ string, within time.Duration, take bool) *delivery {
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		w.mu.Lock()
		d := w.find(typ, take)
		arrived := w.arrived
		w.mu.Unlock()
		if d != nil {
			return d
		}
		select {
		case <-arrived:
		case <-timer.C:
			return nil
		}
	}
}

// count returns how many verified deliveries of typ arrived, every attempt counted.
func (w *webhooks) count(typ string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, d := range w.got {
		if d.typ == typ && d.verified {
			n++
		}
	}
	return n
}

// maxListed is how many deliveries a failure message lists, the latest.
const maxListed = 20

// received describes every delivery, for a failure message: one indented line each.
func (w *webhooks) received() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.got) == 0 {
		return "    received: nothing"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "    received: %d deliver%s", len(w.got), plural(len(w.got), "y", "ies"))
	got := w.got
	if len(got) > maxListed {
		fmt.Fprintf(&b, " (the first %d not shown)", len(got)-maxListed)
		got = got[len(got)-maxListed:]
	}
	for _, d := range got {
		b.WriteString("\n      " + w.describe(d))
	}
	return b.String()
}

// describe writes one delivery on one line. The caller holds mu.
func (w *webhooks) describe(d *delivery) string {
	typ := d.typ
	if typ == "" {
		typ = "(no type)"
	}
	verified := "verified"
	if !d.verified {
		verified = "not verified (" + d.why + ")"
	}
	line := fmt.Sprintf("%d. +%.3fs %s %s, webhook-id %q, %s, answered %d",
		d.n, d.at.Sub(w.started).Seconds(), d.method, typ, d.header.Get(webhook.HeaderID), verified, d.status)
	if d.taken {
		line += ", taken by webhook expect"
	}
	return line
}

// plural returns one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// webhookSubs are the subcommands of webhook that are scenarios' own.
var webhookSubs = []string{"listen", "expect", "count"}

// cmdWebhook: webhook listen|expect|count ..., the scenarios' own, and the table's webhook
// commands (webhook add, list and remove).
func cmdWebhook(ts *testscript.TestScript, neg bool, args []string) {
	getState(ts).webhooks.failRefused(ts)
	if len(args) > 0 {
		switch args[0] {
		case "listen":
			cmdWebhookListen(ts, neg, args[1:])
			return
		case "expect":
			cmdWebhookExpect(ts, neg, args[1:])
			return
		case "count":
			cmdWebhookCount(ts, neg, args[1:])
			return
		}
	}
	tableSubs := command.Subcommands(command.Table, "webhook")
	if len(args) > 0 && slices.Contains(tableSubs, args[0]) {
		tableCommand("webhook")(ts, neg, args)
		return
	}
	what := "missing subcommand"
	if len(args) > 0 {
		what = fmt.Sprintf("unknown subcommand %q", args[0])
	}
	ts.Fatalf("webhook: %s: want %s\nusage: %s",
		what, strings.Join(append(tableSubs, webhookSubs...), " or "), usageOf("webhook"))
}

// parseInterleaved parses args with fs, flags before, between or after the positional
// arguments, aborting with the usage line of name on any error; it returns the
// positional arguments.
func parseInterleaved(ts *testscript.TestScript, name string, fs *flag.FlagSet, args []string) []string {
	var pos []string
	for {
		rest, _ := parseFlags(ts, name, fs, args)
		if len(rest) == 0 {
			return pos
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// cmdWebhookListen: webhook listen [-fail N] [-status CODE]
func cmdWebhookListen(ts *testscript.TestScript, neg bool, args []string) {
	const name = "webhook listen"
	noNeg(ts, neg, name, "")
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fail := fs.Int("fail", 0, "")
	status := fs.Int("status", http.StatusOK, "")
	if pos := parseInterleaved(ts, name, fs, args); len(pos) > 0 {
		usagef(ts, name, "unexpected %q", pos)
	}
	if *fail < 0 {
		usagef(ts, name, "-fail N must be a number of deliveries, 0 or more, not %d", *fail)
	}
	if *status < 200 || *status > 599 {
		usagef(ts, name, "-status CODE must be an HTTP status, 200 to 599, not %d", *status)
	}
	url := getState(ts).webhooks.listen(*fail, *status)
	ts.Setenv("WEBHOOK_URL", url)
}

// cmdWebhookExpect: webhook expect TYPE [-within DURATION]
func cmdWebhookExpect(ts *testscript.TestScript, neg bool, args []string) {
	const name = "webhook expect"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	within := fs.Duration("within", defaultWithin, "")
	pos := parseInterleaved(ts, name, fs, args)
	if len(pos) != 1 || pos[0] == "" {
		usage(ts, name)
	}
	if *within <= 0 {
		usagef(ts, name, "-within DURATION must be positive, not %v", *within)
	}
	typ := pos[0]
	st := getState(ts)
	w := st.webhooks
	if w.url() == "" {
		ts.Fatalf("%s: no receiver: run webhook listen first", name)
	}
	d := w.await(typ, *within, !neg)
	w.failRefused(ts) // what arrived meanwhile
	switch {
	case neg && d != nil:
		ts.Fatalf("%s: unexpected verified %s delivery within %v\n%s", name, typ, *within, w.received())
	case neg:
		fmt.Fprintf(ts.Stderr(), "no verified %s delivery within %v\n", typ, *within)
		return
	case d == nil:
		ts.Fatalf("%s: no verified %s delivery within %v\n%s", name, typ, *within, w.received())
	}
	st.last = &response{status: http.StatusOK, header: d.header.Clone(), body: d.body}
	ts.Setenv("EVENT_ID", d.id)
	w.mu.Lock()
	line := w.describe(d)
	w.mu.Unlock()
	fmt.Fprintf(ts.Stderr(), "delivery %s\n", line)
	fmt.Fprintf(ts.Stdout(), "%s\n", bytes.TrimSuffix(d.body, []byte("\n")))
}

// cmdWebhookCount: webhook count TYPE N
func cmdWebhookCount(ts *testscript.TestScript, neg bool, args []string) {
	const name = "webhook count"
	if len(args) != 2 || args[0] == "" {
		usage(ts, name)
	}
	want, err := strconv.Atoi(args[1])
	if err != nil || want < 0 {
		usagef(ts, name, "N must be a number of deliveries, 0 or more, not %q", args[1])
	}
	w := getState(ts).webhooks
	if w.url() == "" {
		ts.Fatalf("%s: no receiver: run webhook listen first", name)
	}
	typ := args[0]
	n := w.count(typ)
	switch {
	case neg && n == want:
		ts.Fatalf("%s: unexpected count\n    expected: any number of verified %s deliveries but %d\n    actual:   %d\n%s",
			name, typ, want, n, w.received())
	case !neg && n != want:
		ts.Fatalf("%s: unexpected count\n    expected: %d verified %s deliver%s\n    actual:   %d\n%s",
			name, want, typ, plural(want, "y", "ies"), n, w.received())
	}
	fmt.Fprintf(ts.Stderr(), "%d verified %s deliver%s\n", n, typ, plural(n, "y", "ies"))
}
