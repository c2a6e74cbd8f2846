package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// paymentsd bench -op drives each of the fourteen endpoints: each write op's requests are
// real changes (200s only), each read reads a fixture made by the administration
// commands, and an op that uses its objects up stops when they run out instead of sending
// requests that would answer 404.

// benchWorld is a platform served on a fresh database, with everything each op needs.
type benchWorld struct {
	url, platform, secret string
	user, payee           string // the key's user and a payee of hers
	apiKey, apiSecret     string
	account, address      string // an account of the (verified) user, a payee address of hers
	cards                 string // a file of 20 of her cards
	db                    string
}

// runJSON runs paymentsd with args, which must succeed, and decodes the data of the
// envelope it prints (a call) into v, or the whole JSON when it has no data.
func runJSON(t *testing.T, v any, stdin string, args ...string) {
	t.Helper()
	r := runT(t, stdin, args...)
	if r.code != 0 {
		t.Fatalf("%q: exit status %d: %s %s", args, r.code, r.stdout, r.stderr)
	}
	var envelope struct {
		Data json.RawMessage `json:"data"`
	}
	out := []byte(r.stdout)
	if json.Unmarshal(out, &envelope) == nil && envelope.Data != nil {
		out = envelope.Data
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("%q: %q: %v", args, r.stdout, err)
	}
}

func newBenchWorld(t *testing.T) benchWorld {
	t.Helper()
	f := benchWorld{db: tempDB(t)}
	var creds struct {
		PlatformID string `json:"platform_id"`
		Secret     string `json:"secret"`
	}
	runJSON(t, &creds, "", "platform", "create", "-db", f.db, "-name", "Acme")
	f.platform, f.secret = creds.PlatformID, creds.Secret
	addr, _, stop := serve(t, "-db", f.db, "-addr", "127.0.0.1:0", "-rate-limit", "0")
	t.Cleanup(func() { stop() })
	f.url = "http://" + addr
	signed := []string{"call", "-url", f.url, "-platform", f.platform, "-secret", f.secret}

	var ids struct {
		UserID    string `json:"user_id"`
		PayeeID   string `json:"payee_id"`
		AccountID string `json:"account_id"`
		ID        string `json:"id"`
		CardID    string `json:"card_id"`
		APIKey    string `json:"api_key"`
		APISecret string `json:"api_secret"`
	}
	runJSON(t, &ids, "", append(signed, "POST", "/api/platform/users/create", `{"name":"Ada","email":"ada@example.com"}`)...)
	f.user = ids.UserID
	runJSON(t, &ids, "", "apikey", "create", "-db", f.db, "-user", f.user)
	f.apiKey, f.apiSecret = ids.APIKey, ids.APISecret
	runJSON(t, &ids, "", "call", "-url", f.url, "-api-key", f.apiKey, "-api-secret", f.apiSecret,
		"POST", "/api/user-api/payee/create", `{"name":"Ravi"}`)
	f.payee = ids.PayeeID
	runJSON(t, &ids, `{"name":"Ravi","address_line_1":"1 MG Road","city":"Mumbai","state":"MH","zipcode":"400001","country":"IN"}`,
		"address", "add", "-db", f.db, "-user", f.user, "-payee", f.payee, "-")
	f.address = f.user + "/" + ids.ID
	runJSON(t, &ids, "", "user", "verify", "-db", f.db, f.user)
	runJSON(t, &ids, "", append(signed, "POST", "/api/platform/accounts/add-account", fmt.Sprintf(`{"user_id":%q,`+
		`"bank_name":"B","account_number":"1234","routing_number":"021000021","account_type":"PERSONAL_CHECKING"}`, f.user))...)
	f.account = ids.AccountID
	runJSON(t, new(any), "", "rates", "set", "-db", f.db, "-base", "USD", "-payout", "INR", "-rate", "83.12")

	var cards strings.Builder
	for range 20 {
		runJSON(t, &ids, "", "card", "add", "-db", f.db, "-user", f.user)
		fmt.Fprintf(&cards, "%s/%s\n", f.user, ids.CardID)
	}
	f.cards = filepath.Join(t.TempDir(), "cards")
	if err := os.WriteFile(f.cards, []byte(cards.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// args returns bench's arguments for op with every fixture flag, but those left out, and
// extra.
func (f benchWorld) args(op string, leftOut []string, extra ...string) []string {
	flags := [][2]string{
		{"-url", f.url}, {"-platform", f.platform}, {"-secret", f.secret},
		{"-api-key", f.apiKey}, {"-api-secret", f.apiSecret}, {"-user", f.user},
		{"-account", f.account}, {"-cards", f.cards}, {"-address", f.address},
	}
	args := []string{"bench", "-op", op}
	for _, fl := range flags {
		if !slices.Contains(leftOut, fl[0]) {
			args = append(args, fl[0], fl[1])
		}
	}
	return append(args, extra...)
}

func TestBenchOps(t *testing.T) {
	f := newBenchWorld(t)
	uses := map[string]string{"delete-card": "cards", "delete-payee-bank": "payee banks"}
	more := map[string]string{"delete-card": "list more in -cards", "delete-payee-bank": "add more first with -banks N"}

	for _, op := range []string{
		"create", "create-payee", "update-payee", "add-account", "delete-card", "add-payee-bank", "delete-payee-bank",
		"get", "list", "get-account", "list-addresses", "get-address", "rules", "rates",
	} {
		t.Run(op, func(t *testing.T) {
			d := 200 * time.Millisecond
			if op == "delete-card" { // far longer than 19 deletes take: they run out however slow the machine
				d = 2 * time.Minute
			}
			r := runT(t, "", f.args(op, nil, "-c", "2", "-d", d.String())...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("exit status %d: %s %s", r.code, r.stdout, r.stderr)
			}
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			figures := regexp.MustCompile(`^` + op + `: \d+ requests/s, p50 \S+, p99 \S+, slowest \S+, (\d+) requests \(200: \d+\)$`)
			if !figures.MatchString(lines[0]) {
				t.Errorf("line 1: %q, want %s", lines[0], figures)
			}
			ranOut := regexp.MustCompile(`^` + op + `: ran out of ` + uses[op] + ` \S+ into the ` + d.String() + ` run; each client stopped ` +
				`as it found none left, so the figures are of the \S+ until the last stopped \(` + regexp.QuoteMeta(more[op]) + `\)$`)
			switch {
			case op == "delete-card": // 20 cards, one deleted before the clock: they run out
				if len(lines) != 2 || !ranOut.MatchString(lines[1]) || figures.FindStringSubmatch(lines[0])[1] != "19" {
					t.Errorf("output:\n%s\nwant 19 deletes, then %s", r.stdout, ranOut)
				}
			case len(lines) == 2 && uses[op] != "": // the banks added for twice -d may run out
				if !ranOut.MatchString(lines[1]) {
					t.Errorf("line 2: %q, want %s", lines[1], ranOut)
				}
			case len(lines) != 1:
				t.Errorf("output:\n%s", r.stdout)
			}
		})
	}

	t.Run("Banks", func(t *testing.T) {
		// -d is far longer than 5 deletes take: the clients stop when the banks run out, so
		// the run ends then, however slow the machine.
		r := runT(t, "", f.args("delete-payee-bank", nil, "-banks", "5", "-c", "2", "-d", "2m")...)
		if r.code != 0 || !strings.Contains(r.stdout, ", 5 requests (200: 5)\n") ||
			!strings.Contains(r.stdout, "delete-payee-bank: ran out of payee banks ") {
			t.Errorf("exit status %d: %s %s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("ErrUsage", func(t *testing.T) {
		for _, tt := range []struct {
			op      string
			leftOut []string
			extra   []string
			want    string
		}{
			{"create", []string{"-secret"}, nil, "-op create needs -secret"},
			{"create-payee", []string{"-api-key", "-api-secret"}, nil, "-op create-payee needs -api-key and -api-secret"},
			{"update-payee", []string{"-user"}, nil, "-op update-payee needs -user"},
			{"delete-card", []string{"-cards"}, nil, "-op delete-card needs -cards"},
			{"add-payee-bank", []string{"-api-secret"}, nil, "-op add-payee-bank needs -api-secret"},
			{"delete-payee-bank", []string{"-platform", "-api-key"}, nil, "-op delete-payee-bank needs -platform and -api-key"},
			{"get-account", []string{"-account"}, nil, "-op get-account needs -account"},
			{"list-addresses", []string{"-user"}, nil, "-op list-addresses needs -user"},
			{"get-address", []string{"-address"}, nil, "-op get-address needs -address"},
			{"get-address", nil, []string{"-address", strings.Split(f.address, "/")[1]}, "want USER_ID/ADDRESS_ID"},
			{"get-account", nil, []string{"-account", "12"}, `-account "12": not a UUID`},
			{"delete-payee-bank", nil, []string{"-banks", "-1"}, "-banks must not be negative"},
		} {
			r := runT(t, "", f.args(tt.op, tt.leftOut, tt.extra...)...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("%s without %q: exit status %d, stderr %q, want 2 and %q", tt.op, tt.leftOut, r.code, r.stderr, tt.want)
			}
		}
	})

	t.Run("ErrFixture", func(t *testing.T) {
		unknownCard := filepath.Join(t.TempDir(), "cards")
		if err := os.WriteFile(unknownCard, []byte(f.user+"/"+uuid.NewString()+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			op    string
			extra []string
			want  string
		}{
			{"delete-card", []string{"-cards", unknownCard}, "deleting the first card of -cards (a card of the platform, not deleted yet): HTTP 404"},
			{"get-account", []string{"-account", f.platform}, "reading -account (an account of an identity-verified user): HTTP 404"},
			{"update-payee", []string{"-user", f.platform}, "(is -user the user of -api-key?): HTTP 404"},
			{"list-addresses", []string{"-user", f.platform}, "listing the payee addresses of -user: HTTP 404"},
			{"rates", []string{"-payout", "EUR"}, "no exchange rate for EUR is in force: set one with paymentsd rates set"},
			{"rules", []string{"-country", "US"}, "reading the payee rules of -country and -payout: HTTP 404"},
		} {
			r := runT(t, "", f.args(tt.op, nil, append(tt.extra, "-d", "50ms")...)...)
			if r.code != 1 || !strings.Contains(r.stderr, tt.want) || r.stdout != "" {
				t.Errorf("%s %q: exit status %d, stdout %q, stderr %q, want 1 and %q", tt.op, tt.extra, r.code, r.stdout, r.stderr, tt.want)
			}
		}
	})
}
