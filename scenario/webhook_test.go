package scenario

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/platform-payments/payments/internal/command"
	"github.com/platform-payments/payments/internal/webhook"
)

// No dispatcher sends deliveries to the scripts yet: these tests post them themselves,
// signed with webhook.Headers, to the receiver a script started, over HTTP on 127.0.0.1.

// event is a delivery to post: an event of typ about the user userID.
type event struct {
	id, typ, userID string
	secrets         []webhook.Secret
	at              time.Time // its webhook-timestamp; now when zero
}

// body is the event as the server writes it.
func (e event) body() []byte {
	return fmt.Appendf(nil, `{"id":%q,"type":%q,"timestamp":"2026-01-02T03:04:05Z","platform_id":"7f0c2a4e-1b7d-4c61-9a53-0d8e7f6b5a41","environment":"sandbox","data":{"object":{"type":"user","id":%q}}}`,
		e.id, e.typ, e.userID)
}

// client posts deliveries; it goes to the loopback address only, never through a proxy.
var client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}

// post delivers e to url and returns the status the receiver answered.
func post(url string, e event) (int, error) {
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		return 0, fmt.Errorf("the receiver is at %s, not on 127.0.0.1", url)
	}
	at := e.at
	if at.IsZero() {
		at = time.Now()
	}
	body := e.body()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	if err != nil {
		return 0, err
	}
	req.Header = http.Header(webhook.Headers(e.id, at, body, e.secrets...))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// sender posts events to a script's receiver once its webhook listen has run, and
// records what the receiver answered.
type sender struct {
	events []event
	gap    time.Duration // between two posts, so that webhook expect waits

	mu       sync.Mutex
	statuses []int
	errs     []error
}

// run waits for the script's receiver, then posts the events in order, until stop.
func (s *sender) run(st *state, stop <-chan struct{}) {
	var url string
	for url == "" {
		select {
		case <-stop:
			return
		case <-time.After(5 * time.Millisecond):
		}
		url = st.webhookURL()
	}
	for _, e := range s.events {
		time.Sleep(s.gap)
		status, err := post(url, e)
		s.mu.Lock()
		s.statuses = append(s.statuses, status)
		if err != nil {
			s.errs = append(s.errs, err)
		}
		s.mu.Unlock()
	}
}

// webhookParams returns the parameters of the scripts files, each of which knows the
// secret known (learnt from an answer, as from the server's) and has $EVENT1… and
// $USER1… set to the ids of the events and users, and to whose receiver snd posts.
func webhookParams(files []string, known webhook.Secret, vars map[string]string, snd *sender) testscript.Params {
	p := Params("")
	p.Dir, p.Files = "", files
	setup := p.Setup
	p.Setup = func(env *testscript.Env) error {
		if err := setup(env); err != nil {
			return err
		}
		st := env.Values[stateKey{}].(*state)
		st.learnSecrets([]byte(`{"success":true,"data":{"id":"e1","secret":"` + known.Text() + `"}}`))
		for name, value := range vars {
			env.Setenv(name, value)
		}
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			snd.run(st, stop)
		}()
		env.Defer(func() { // before the receiver closes
			close(stop)
			<-done
		})
		return nil
	}
	return p
}

// ids returns n new UUIDs.
func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = uuid.NewString()
	}
	return out
}

// TestWebhookScripts runs the scripts of testdata/webhook, each with the deliveries its
// comment says, and checks what the receiver answered.
func TestWebhookScripts(t *testing.T) {
	known, other := webhook.NewSecret(), webhook.NewSecret()
	ev, users := ids(4), ids(2)
	vars := map[string]string{
		"EVENT1": ev[0], "EVENT2": ev[1], "EVENT3": ev[2], "EVENT4": ev[3],
		"USER1": users[0], "USER2": users[1],
	}
	for _, c := range []struct {
		script string
		events []event
		want   []int // the receiver's answers
	}{
		{"order", []event{
			{id: ev[0], typ: "user.created", userID: users[0], secrets: []webhook.Secret{known}},
			{id: ev[1], typ: "user.created", userID: users[0], secrets: []webhook.Secret{other}},
			{id: ev[2], typ: "user.created", userID: users[1], secrets: []webhook.Secret{known}},
			{id: ev[3], typ: "user.updated", userID: users[0], secrets: []webhook.Secret{known}},
		}, []int{200, 200, 200, 200}},
		{"retry", []event{
			{id: ev[0], typ: "user.created", userID: users[0], secrets: []webhook.Secret{known}},
			{id: ev[0], typ: "user.created", userID: users[0], secrets: []webhook.Secret{known}},
			{id: ev[0], typ: "user.created", userID: users[0], secrets: []webhook.Secret{known}},
		}, []int{500, 500, 410}},
	} {
		snd := &sender{events: c.events, gap: 20 * time.Millisecond}
		t.Run(c.script, func(t *testing.T) { // returns once the script has run
			testscript.Run(t, webhookParams([]string{filepath.Join("testdata", "webhook", c.script+".txtar")}, known, vars, snd))
		})
		if len(snd.errs) > 0 {
			t.Errorf("%s: posting: %v", c.script, snd.errs)
		}
		if fmt.Sprint(snd.statuses) != fmt.Sprint(c.want) {
			t.Errorf("%s: the receiver answered %v, want %v", c.script, snd.statuses, c.want)
		}
	}
}

// TestWebhookFailures runs scripts that fail, and checks what their failure says.
func TestWebhookFailures(t *testing.T) {
	known, other := webhook.NewSecret(), webhook.NewSecret()
	ev, users := ids(2), ids(1)
	vars := map[string]string{"EVENT1": ev[0], "EVENT2": ev[1], "USER1": users[0]}
	// The deliveries each script receives, once its webhook listen has run: a
	// user.created under another secret, then a user.deleted under the known one.
	events := []event{
		{id: ev[0], typ: "user.created", userID: users[0], secrets: []webhook.Secret{other}},
		{id: ev[1], typ: "user.deleted", userID: users[0], secrets: []webhook.Secret{known}},
	}
	for _, c := range []struct {
		name, script string
		want         []string // in the log of the failure
	}{
		// Once the second has arrived (the first expect), the first is still not there.
		{"timeout", "webhook listen\nwebhook expect user.deleted\nwebhook expect user.created -within 300ms\n", []string{
			"webhook expect: no verified user.created delivery within 300ms",
			"received: 2 deliveries",
			`1. +`, `POST user.created, webhook-id "` + ev[0] + `", not verified (no matching webhook signature), answered 200`,
			`2. +`, `POST user.deleted, webhook-id "` + ev[1] + `", verified, answered 200, taken by webhook expect`,
		}},
		{"arrives", "webhook listen\n! webhook expect user.deleted -within 5s\n", []string{
			"webhook expect: unexpected verified user.deleted delivery within 5s",
		}},
		{"count", "webhook listen\nwebhook expect user.deleted\nwebhook count user.deleted 2\n", []string{
			"webhook count: unexpected count",
			"expected: 2 verified user.deleted deliveries",
			"actual:   1",
			"received: 2 deliveries",
			"answered 200, taken by webhook expect",
		}},
		{"count_neg", "webhook listen\nwebhook expect user.deleted\n! webhook count user.deleted 1\n", []string{
			"expected: any number of verified user.deleted deliveries but 1",
		}},
		{"neg_listen", "! webhook listen\n", []string{
			"! webhook listen is not supported",
		}},
		{"before_listen", "webhook count user.created 0\n", []string{
			"webhook count: no receiver: run webhook listen first",
		}},
		{"unknown", "webhook frob\n", []string{
			`webhook: unknown subcommand "frob": want add or list or remove or get or update or disable or enable or recover or test or attempts or trigger or listen or expect or count`,
			"usage: webhook add -platform ID -url URL [-events a,b] [-description TEXT] [-signature v1|ed25519]\n" +
				"       webhook list -platform ID\n" +
				"       webhook remove -platform ID ENDPOINT_ID\n" +
				"       webhook get -platform ID ENDPOINT_ID\n" +
				"       webhook update -platform ID [-url URL] [-events a,b] [-description TEXT | -no-description] [-signature v1|ed25519] ENDPOINT_ID\n" +
				"       webhook disable -platform ID ENDPOINT_ID\n" +
				"       webhook enable -platform ID ENDPOINT_ID\n" +
				"       webhook recover -platform ID -since TIME [-until TIME] ENDPOINT_ID\n" +
				"       webhook test -platform ID ENDPOINT_ID\n" +
				"       webhook attempts -platform ID [-after ATTEMPT_ID] [-limit N] ENDPOINT_ID\n" +
				"       webhook trigger -platform ID TYPE\n" +
				"       webhook listen [-fail N] [-status CODE]\n" +
				"       webhook expect TYPE [-within DURATION]\n" +
				"       webhook count TYPE N",
		}},
		{"missing", "webhook\n", []string{
			"webhook: missing subcommand",
		}},
		{"usage", "webhook listen -fail -1\n", []string{
			"webhook listen: -fail N must be a number of deliveries, 0 or more, not -1\nusage: webhook listen [-fail N] [-status CODE]",
		}},
		{"usage_expect", "webhook listen\nwebhook expect\n", []string{
			"usage: webhook expect TYPE [-within DURATION]",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, c.name+".txtar")
			if err := os.WriteFile(file, []byte(c.script), 0o666); err != nil {
				t.Fatal(err)
			}
			snd := &sender{events: events}
			rt := &recordT{}
			rt.do(func() { testscript.RunT(rt, webhookParams([]string{file}, known, vars, snd)) })
			log := rt.log()
			if !rt.failed() {
				t.Fatalf("the script passed:\n%s", log)
			}
			for _, want := range c.want {
				if !strings.Contains(log, want) {
					t.Errorf("the log does not say %q:\n%s", want, log)
				}
			}
		})
	}
}

// TestCheckDeliveries: CheckDeliveries' check sees every delivery; one it refuses fails
// the script at its next webhook command, or at its end, naming the delivery.
func TestCheckDeliveries(t *testing.T) {
	known, other := webhook.NewSecret(), webhook.NewSecret()
	ev, users := ids(2), ids(1)
	vars := map[string]string{"EVENT1": ev[0], "EVENT2": ev[1], "USER1": users[0]}
	// A user.created under another secret, then a user.deleted under the known one: the
	// check refuses the user.deleted.
	events := []event{
		{id: ev[0], typ: "user.created", userID: users[0], secrets: []webhook.Secret{other}},
		{id: ev[1], typ: "user.deleted", userID: users[0], secrets: []webhook.Secret{known}},
	}
	var mu sync.Mutex
	var seen []string // the webhook-id of each delivery checked
	check := func(header http.Header, body []byte) error {
		mu.Lock()
		seen = append(seen, header.Get(webhook.HeaderID))
		mu.Unlock()
		if strings.Contains(string(body), `"user.deleted"`) {
			return fmt.Errorf("no such event type as user.deleted")
		}
		return nil
	}
	run := func(t *testing.T, script string, check func(http.Header, []byte) error) (log string, failed bool) {
		t.Helper()
		mu.Lock()
		seen = nil
		mu.Unlock()
		file := filepath.Join(t.TempDir(), "check.txtar")
		if err := os.WriteFile(file, []byte(script), 0o666); err != nil {
			t.Fatal(err)
		}
		snd := &sender{events: events}
		rt := &recordT{}
		rt.do(func() { testscript.RunT(rt, CheckDeliveries(webhookParams([]string{file}, known, vars, snd), check)) })
		return rt.log(), rt.failed()
	}
	refused := []string{
		"webhook delivery refused by the check of deliveries",
		`delivery: 2. +`, `POST user.deleted, webhook-id "` + ev[1] + `", verified, answered 200`,
		"error:    no such event type as user.deleted",
		`"type": "user.deleted"`,
	}
	for _, c := range []struct {
		name, script string
		want         []string
	}{
		// The refused delivery arrives while webhook expect waits for it.
		{"at_the_command", "webhook listen\nwebhook expect user.deleted\n", refused},
		// It arrives before the next command, whatever that command is.
		{"at_the_next", "webhook listen\nexec sleep 0.3\n! webhook count user.created 5\n",
			append([]string{"check.txtar:3: webhook delivery refused"}, refused...)},
		// No webhook command follows it.
		{"at_the_end", "webhook listen\nexec sleep 0.3\n", append([]string{"at the end of the script: "}, refused...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			log, failed := run(t, c.script, check)
			if !failed {
				t.Fatalf("the script passed:\n%s", log)
			}
			for _, want := range c.want {
				if !strings.Contains(log, want) {
					t.Errorf("the log does not say %q:\n%s", want, log)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(seen, []string{ev[0], ev[1]}) {
				t.Errorf("checked the deliveries %q, want %q", seen, []string{ev[0], ev[1]})
			}
		})
	}
	t.Run("passes", func(t *testing.T) {
		log, failed := run(t, "webhook listen\nwebhook expect user.deleted\n", func(header http.Header, _ []byte) error {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, header.Get(webhook.HeaderID))
			return nil
		})
		if failed {
			t.Fatalf("the script failed:\n%s", log)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(seen) != 2 {
			t.Errorf("checked %d deliveries, want 2", len(seen))
		}
	})
}

// recordT is testscript's T for a script expected to fail: it records the log and the
// outcome instead of failing the test.
type recordT struct {
	mu      sync.Mutex
	entries []string
	failure bool
	child   *recordT
}

func (t *recordT) do(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

func (t *recordT) Run(_ string, f func(testscript.T)) {
	sub := &recordT{}
	t.mu.Lock()
	t.child = sub
	t.mu.Unlock()
	sub.do(func() { f(sub) })
}

func (t *recordT) Log(args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.entries = append(t.entries, fmt.Sprint(args...))
}

func (t *recordT) FailNow() {
	t.mu.Lock()
	t.failure = true
	t.mu.Unlock()
	runtime.Goexit()
}

func (t *recordT) Fatal(args ...any) { t.Log(args...); t.FailNow() }
func (t *recordT) Skip(args ...any)  { t.Log(args...); runtime.Goexit() }
func (t *recordT) Parallel()         {}
func (t *recordT) Verbose() bool     { return false }

// log returns what the script logged, its own and the top's.
func (t *recordT) log() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.Join(t.entries, "\n")
	if t.child != nil {
		s += "\n" + t.child.log()
	}
	return s
}

// failed reports whether the script failed.
func (t *recordT) failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failure || (t.child != nil && t.child.failed())
}

// TestReceiver: the receiver's answers as webhook listen sets them, its URL, and what it
// records, without a script.
func TestReceiver(t *testing.T) {
	w := newWebhooks()
	defer w.close()
	known := webhook.NewSecret()
	w.learn([]byte(`{"secret":"` + known.Text() + `"}`))
	if u := w.url(); u != "" {
		t.Fatalf("url before listen = %q, want none", u)
	}
	url := w.listen(2, 200)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/hook") {
		t.Fatalf("the receiver is at %s, want http://127.0.0.1:PORT/hook", url)
	}
	e := event{id: uuid.NewString(), typ: "user.created", userID: uuid.NewString(), secrets: []webhook.Secret{known}}
	answers := func(n int) []int {
		var got []int
		for range n {
			status, err := post(url, e)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, status)
		}
		return got
	}
	if got := fmt.Sprint(answers(3)); got != "[500 500 200]" {
		t.Errorf("-fail 2: answers %s, want [500 500 200]", got)
	}
	// Again: the same receiver, failures counted afresh, deliveries kept.
	if again := w.listen(1, 410); again != url {
		t.Errorf("listen again: %s, want the same %s", again, url)
	}
	if got := fmt.Sprint(answers(2)); got != "[500 410]" {
		t.Errorf("-fail 1 -status 410: answers %s, want [500 410]", got)
	}
	if n := w.count("user.created"); n != 5 {
		t.Errorf("count = %d, want the 5 attempts", n)
	}
	w.mu.Lock()
	for i, d := range w.got {
		if d.n != i+1 || d.id != e.id || d.method != http.MethodPost || d.path != "/hook" || !d.verified {
			t.Errorf("delivery %d: %+v", i+1, d)
		}
	}
	w.mu.Unlock()
}

// TestReceiverSecrets: a delivery verifies under any secret the script knows, one learnt
// after it arrived included; an old timestamp does not verify.
func TestReceiverSecrets(t *testing.T) {
	w := newWebhooks()
	defer w.close()
	url := w.listen(0, 200)
	old, rotated := webhook.NewSecret(), webhook.NewSecret()
	deliver := func(e event) {
		t.Helper()
		e.id, e.typ, e.userID = uuid.NewString(), "user.created", uuid.NewString()
		if _, err := post(url, e); err != nil {
			t.Fatal(err)
		}
	}
	deliver(event{secrets: []webhook.Secret{old}}) // no secret known yet
	w.learn([]byte(`{"data":{"secret":"` + old.Text() + `"}}`))
	deliver(event{secrets: []webhook.Secret{old, rotated}}) // the overlap of a rotation
	w.learn([]byte(`{"secret":"` + rotated.Text() + `"}`))
	deliver(event{secrets: []webhook.Secret{rotated}})
	deliver(event{secrets: []webhook.Secret{rotated}, at: time.Now().Add(-time.Hour)})
	deliver(event{secrets: []webhook.Secret{webhook.NewSecret()}})

	w.mu.Lock()
	defer w.mu.Unlock()
	for i, want := range []string{"", "", "", "webhook timestamp too old", "no matching webhook signature"} {
		d := w.got[i]
		if d.verified != (want == "") || !strings.Contains(d.why, want) {
			t.Errorf("delivery %d: verified %v (%s), want %q", i+1, d.verified, d.why, want)
		}
	}
	if len(w.secrets) != 2 {
		t.Errorf("%d secrets known, want the old and the rotated", len(w.secrets))
	}
}

// TestLearnSecrets: what learn takes for a secret, and what it leaves.
func TestLearnSecrets(t *testing.T) {
	s := webhook.NewSecret().Text()
	for _, c := range []struct {
		body string
		want int
	}{
		{`{"secret":"` + s + `"}`, 1},
		{`{"data":{"secret":"` + s + `"}}`, 1},
		{"  {\"data\":{\"secret\":\"" + s + "\"}}\n", 1},
		{`{"secret":"` + s + `","data":{"secret":"` + s + `"}}`, 1}, // the same, once
		{`{"data":{"endpoint":{"secret":"` + s + `"}}}`, 0},         // deeper: not looked at
		{`[{"secret":"` + s + `"}]`, 0},
		{`{"secret":"sk_live_abc"}`, 0}, // a platform secret
		{`{"secret":"whsec_bm90IGEgc2VjcmV0"}`, 0},
		{`{"secret":3}`, 0},
		{`not json`, 0},
		{``, 0},
	} {
		w := newWebhooks()
		w.learn([]byte(c.body))
		if len(w.secrets) != c.want {
			t.Errorf("learn(%s): %d secrets, want %d", c.body, len(w.secrets), c.want)
		}
	}
}

// TestWebhookTableCommands: webhook runs the table's webhook commands, and the secrets
// they print, or that an answer they take holds, are learnt. Two made-up entries stand
// for them here, with secrets the test knows: webhook make prints a secret as an
// administration command (webhook add) does, webhook rotate hands an answer holding
// another to the host as call does. The test changes the table, so it does not run in
// parallel with others.
func TestWebhookTableCommands(t *testing.T) {
	first, second := webhook.NewSecret(), webhook.NewSecret()
	add := &command.Command{
		Name: "webhook make", Usage: "-url URL",
		Run: func(_ context.Context, x *command.Invocation, _ []string) error {
			return x.PrintJSON(map[string]string{"id": "e1", "secret": first.Text()})
		},
	}
	rotate := &command.Command{
		Name: "webhook rotate", Usage: "ID",
		Run: func(_ context.Context, x *command.Invocation, _ []string) error {
			body := []byte(`{"success":true,"data":{"id":"e1","secret":"` + second.Text() + `"}}`)
			return x.Host.Answered(&http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{}}, body)
		},
	}
	savedTable, savedUsages := command.Table, usages
	t.Cleanup(func() { command.Table, usages = savedTable, savedUsages })
	command.Table = append(slices.Clone(savedTable), add, rotate)
	usages = append(slices.Clone(savedUsages),
		usageLine{"webhook", "webhook make -url URL", nil}, usageLine{"webhook", "webhook rotate ID", nil})

	ev, users := ids(3), ids(1)
	vars := map[string]string{"EVENT1": ev[0], "EVENT2": ev[1], "EVENT3": ev[2], "USER1": users[0]}
	events := []event{
		{id: ev[0], typ: "user.created", userID: users[0], secrets: []webhook.Secret{first}},
		{id: ev[1], typ: "user.created", userID: users[0], secrets: []webhook.Secret{first, second}},
		{id: ev[2], typ: "user.created", userID: users[0], secrets: []webhook.Secret{second}},
	}
	script := `webhook make -url http://127.0.0.1:1/hook
stdout '"secret":"whsec_'
webhook rotate e1
webhook listen
webhook expect user.created
json id $EVENT1
webhook expect user.created
json id $EVENT2
webhook expect user.created
json id $EVENT3
webhook count user.created 3
`
	dir := t.TempDir()
	file := filepath.Join(dir, "table.txtar")
	if err := os.WriteFile(file, []byte(script), 0o666); err != nil {
		t.Fatal(err)
	}
	snd := &sender{events: events}
	t.Run("learns", func(t *testing.T) {
		testscript.Run(t, webhookParams([]string{file}, webhook.NewSecret(), vars, snd))
	})
	if len(snd.errs) > 0 {
		t.Errorf("posting: %v", snd.errs)
	}

	// An unknown subcommand names them all.
	file = filepath.Join(dir, "unknown.txtar")
	if err := os.WriteFile(file, []byte("webhook frob\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	rt := &recordT{}
	rt.do(func() { testscript.RunT(rt, webhookParams([]string{file}, webhook.NewSecret(), vars, &sender{})) })
	log := rt.log()
	for _, want := range []string{
		`webhook: unknown subcommand "frob": want add or list or remove or get or update or disable or enable or recover or test or attempts or trigger or make or rotate or listen or expect or count`,
		"       webhook count TYPE N\n       webhook make -url URL\n       webhook rotate ID",
	} {
		if !rt.failed() || !strings.Contains(log, want) {
			t.Errorf("webhook frob: the log does not say %q:\n%s", want, log)
		}
	}
}
