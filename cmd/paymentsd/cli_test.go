package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// result is what one run of the program left behind.
type result struct {
	code           int
	stdout, stderr string
}

// run runs paymentsd with args and stdin.
func runT(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// wantOneLine fails unless s is exactly one newline-terminated line containing want.
func wantOneLine(t *testing.T, what, s, want string) {
	t.Helper()
	if strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "\n") {
		t.Errorf("%s = %q, want one line", what, s)
	}
	if !strings.Contains(s, want) {
		t.Errorf("%s = %q, want it to contain %q", what, s, want)
	}
}

// decodeLine decodes stdout, which must be one line of compact JSON, into v, refusing
// unknown fields.
func decodeLine(t *testing.T, stdout string, v any) {
	t.Helper()
	wantOneLine(t, "stdout", stdout, "{")
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("stdout %q: %v", stdout, err)
	}
}

// withoutKeyNote returns stderr without the line a command writes when it creates the
// key file of the new database db, and fails unless that line is there.
func withoutKeyNote(t *testing.T, stderr, db string) string {
	t.Helper()
	prefix := "paymentsd: created the data key file " + db + ".key (key id "
	line, rest, _ := strings.Cut(stderr, "\n")
	if !strings.HasPrefix(line, prefix) || !strings.Contains(line, "$PAYMENTS_DATA_KEY or -data-key-file") {
		t.Errorf("stderr %q: want first the note that %s.key was created", stderr, db)
		return stderr
	}
	return rest
}

// tempDB returns the path of a database file that does not exist yet.
func tempDB(t *testing.T) string {
	return filepath.Join(t.TempDir(), "payments.db")
}

// openDB opens the library on path, closed when the test ends.
func openDB(t *testing.T, path string, env payments.Environment) *payments.Service {
	t.Helper()
	svc, err := payments.Open(context.Background(), path, payments.Options{Environment: env})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	return svc
}

// newUser creates a platform and one of its users through the library.
func newUser(t *testing.T, svc *payments.Service) (payments.PlatformCredentials, payments.User) {
	t.Helper()
	ctx := context.Background()
	creds, err := svc.CreatePlatform(ctx, "Acme", "")
	if err != nil {
		t.Fatal(err)
	}
	email := "ada@example.com"
	u, err := svc.CreateUser(ctx, creds.PlatformID, payments.NewUser{Name: "Ada", Email: &email})
	if err != nil {
		t.Fatal(err)
	}
	return creds, u
}

func TestUsageErrors(t *testing.T) {
	db := tempDB(t)
	id := uuid.NewString()
	tests := []struct {
		name string
		args []string
		want string // in the one line on stderr
	}{
		{"NoCommand", nil, "paymentsd: no command given"},
		{"UnknownCommand", []string{"frobnicate"}, `paymentsd: unknown command "frobnicate"`},
		{"MissingSubcommand", []string{"platform"}, "paymentsd platform: missing subcommand: want create"},
		{"UnknownSubcommand", []string{"platform", "delete"}, `unknown subcommand "delete"`},
		{"HelpUnknownCommand", []string{"help", "frobnicate"}, `unknown command "frobnicate"`},
		{"UnknownFlag", []string{"platform", "create", "-db", db, "-colour", "red", "-name", "A"}, "paymentsd platform create: flag provided but not defined: -colour (see 'paymentsd platform create -h')"},
		{"FlagWithoutValue", []string{"platform", "create", "-db", db, "-name"}, "flag needs an argument: -name"},
		{"NameMissing", []string{"platform", "create", "-db", db}, "paymentsd platform create: -name is required (see 'paymentsd platform create -h')"},
		{"NameEmpty", []string{"platform", "create", "-db", db, "-name", ""}, "-name is required"},
		{"BadEnv", []string{"platform", "create", "-db", db, "-env", "staging", "-name", "A"}, `invalid value "staging" for flag -env: want sandbox or production`},
		{"EmptyDB", []string{"platform", "create", "-db", "", "-name", "A"}, "-db must not be empty"},
		{"ExtraArgument", []string{"platform", "create", "-db", db, "-name", "A", "more"}, `unexpected argument "more"`},
		{"APIKeyUserMissing", []string{"apikey", "create", "-db", db}, "paymentsd apikey create: -user is required"},
		{"APIKeyUserMalformed", []string{"apikey", "create", "-db", db, "-user", "42"}, `"42" is not a user id`},
		{"VerifyNoArgument", []string{"user", "verify", "-db", db}, "paymentsd user verify: want exactly one argument, USER_ID; got 0"},
		{"VerifyTwoArguments", []string{"user", "verify", "-db", db, id, id}, "got 2"},
		{"VerifyMalformed", []string{"user", "verify", "-db", db, "not-a-uuid"}, `"not-a-uuid" is not a user id`},
		{"ServeTLSHalf", []string{"serve", "-db", db, "-tls-cert", "cert.pem"}, "-tls-cert and -tls-key go together"},
		{"ServeBadEnv", []string{"serve", "-db", db, "-env", "prod"}, "want sandbox or production"},
		{"ServeRateNotANumber", []string{"serve", "-db", db, "-rate-limit", "fast"}, `invalid value "fast" for flag -rate-limit`},
		{"ServeRateNaN", []string{"serve", "-db", db, "-rate-limit", "NaN"}, "-rate-limit must be a number of requests a second"},
		{"ServeBurstNegative", []string{"serve", "-db", db, "-rate-burst", "-1"}, "-rate-burst must not be negative"},
		{"ServeBurstWithoutRate", []string{"serve", "-db", db, "-rate-burst", "10"}, "-rate-burst needs -rate-limit"},
		{"ServeFailuresNotInt", []string{"serve", "-db", db, "-auth-failures", "1.5"}, `invalid value "1.5" for flag -auth-failures`},
		{"CallNoCredentials", []string{"call", "-url", "http://127.0.0.1:1", "GET", "/"}, "paymentsd call: credentials are required"},
		{"CallBothCredentials", []string{"call", "-url", "http://127.0.0.1:1", "-platform", id, "-secret", "s", "-api-key", id, "-api-secret", "s", "GET", "/"}, "not both"},
		{"CallHalfPlatform", []string{"call", "-url", "http://127.0.0.1:1", "-platform", id, "GET", "/"}, "-platform and -secret go together"},
		{"CallHalfAPIKey", []string{"call", "-url", "http://127.0.0.1:1", "-api-secret", "s", "GET", "/"}, "-api-key and -api-secret go together"},
		{"CallNoURL", []string{"call", "-platform", id, "-secret", "s", "GET", "/"}, "-url is required"},
		{"CallURLWithPath", []string{"call", "-url", "http://127.0.0.1:1/api", "-platform", id, "-secret", "s", "GET", "/"}, "want only scheme, host and port"},
		{"CallURLNotHTTP", []string{"call", "-url", "ftp://127.0.0.1", "-platform", id, "-secret", "s", "GET", "/"}, "want http://HOST[:PORT]"},
		{"CallOneArgument", []string{"call", "-url", "http://127.0.0.1:1", "-platform", id, "-secret", "s", "GET"}, "want METHOD PATH [BODY]; got 1 argument"},
		{"CallFourArguments", []string{"call", "-url", "http://127.0.0.1:1", "-platform", id, "-secret", "s", "POST", "/", "{}", "x"}, "got 4 arguments"},
		{"CallRelativePath", []string{"call", "-url", "http://127.0.0.1:1", "-platform", id, "-secret", "s", "GET", "api"}, "must start with /"},
		{"CallSpaceInPath", []string{"call", "-url", "http://127.0.0.1:1", "-platform", id, "-secret", "s", "GET", "/a b"}, "must be percent-encoded"},
		{"CallBadMethod", []string{"call", "-url", "http://127.0.0.1:1", "-platform", id, "-secret", "s", "GE T", "/"}, "is not an HTTP method"},
		{"RotateNoNewKey", []string{"keys", "rotate", "-db", db}, "paymentsd keys rotate: -new-key-file is required"},
		{"RotateBadBatch", []string{"keys", "rotate", "-db", db, "-new-key-file", "k", "-batch", "0"}, "-batch must be at least 1"},
		{"StatusExtraArgument", []string{"keys", "status", "-db", db, "more"}, `unexpected argument "more"`},
		{"OldKeyFileEmpty", []string{"user", "verify", "-db", db, "-old-data-key-file", "", id}, "want a file name"},
		{"CallBadHeader", []string{"call", "-url", "http://127.0.0.1:1", "-platform", id, "-secret", "s", "-header", "no colon", "GET", "/"}, "want 'Name: value'"},
		{"CallTimestampTwice", []string{"call", "-url", "http://127.0.0.1:1", "-platform", id, "-secret", "s", "-timestamp", "-timestamp-at", "1", "GET", "/"}, "give -timestamp or -timestamp-at, not both"},
		{"CallTimestampAPIKey", []string{"call", "-url", "http://127.0.0.1:1", "-api-key", id, "-api-secret", "s", "-timestamp", "GET", "/"}, "-timestamp and -timestamp-at go with -platform and -secret"},
		{"CallTimestampAtAPIKey", []string{"call", "-url", "http://127.0.0.1:1", "-api-key", id, "-api-secret", "s", "-timestamp-at", "1", "GET", "/"}, "go with -platform and -secret"},
		{"CallTimestampAtNotInteger", []string{"call", "-url", "http://127.0.0.1:1", "-platform", id, "-secret", "s", "-timestamp-at", "now", "GET", "/"}, `invalid value "now" for flag -timestamp-at`},
		{"ServeToleranceFraction", []string{"serve", "-db", db, "-timestamp-tolerance", "1.5s"}, "-timestamp-tolerance 1.5s: want whole seconds, at least 1s"},
		{"ServeToleranceZero", []string{"serve", "-db", db, "-timestamp-tolerance", "0s"}, "want whole seconds, at least 1s"},
		{"ServeToleranceNegative", []string{"serve", "-db", db, "-timestamp-tolerance", "-5m"}, "want whole seconds, at least 1s"},
		{"ServeToleranceNoUnit", []string{"serve", "-db", db, "-timestamp-tolerance", "300"}, `invalid value "300" for flag -timestamp-tolerance`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runT(t, "", tt.args...)
			if r.code != 2 {
				t.Errorf("exit status %d, want 2", r.code)
			}
			wantOneLine(t, "stderr", r.stderr, tt.want)
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
		})
	}
	for _, f := range []string{db, db + ".key"} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("a usage error touched the database: %v", err)
		}
	}
}

func TestHelp(t *testing.T) {
	tests := []struct {
		args []string
		want []string // on stdout
	}{
		{[]string{"-h"}, []string{"Usage: paymentsd COMMAND", "platform create", "apikey create", "user verify", "call", "serve"}},
		{[]string{"help"}, []string{"Usage: paymentsd COMMAND"}},
		{[]string{"help", "-h"}, []string{"Usage: paymentsd COMMAND"}},
		{[]string{"platform", "-h"}, []string{"Usage: paymentsd COMMAND"}},
		{[]string{"platform", "create", "-h"}, []string{"Usage: paymentsd platform create [-db F] [-env sandbox|production] [-require-timestamp] -name NAME", "-name NAME", "-db FILE", "-require-timestamp"}},
		{[]string{"help", "platform", "create"}, []string{"Usage: paymentsd platform create", "-env ENV"}},
		{[]string{"apikey", "create", "-help"}, []string{"Usage: paymentsd apikey create [-db F] -user USER_ID", "-user USER_ID"}},
		{[]string{"user", "verify", "--help"}, []string{"Usage: paymentsd user verify [-db F] USER_ID"}},
		{[]string{"serve", "-h"}, []string{"Usage: paymentsd serve", "-addr ADDR", "-tls-cert FILE", "-tls-key FILE", "-timestamp-tolerance DURATION", `(default 5m0s)`,
			"-idempotency-ttl DURATION", "-rate-limit R", "no limit (the default)", "-rate-burst B", "twice -rate-limit", "-auth-failures N", "(default 300)", "-client-ip-header NAME"}},
		{[]string{"call", "-h"}, []string{"Usage: paymentsd call -url URL", "-header 'Name: value'", "-api-key KEY", "-timestamp\n", "-timestamp-at UNIX"}},
		{[]string{"keys", "-h"}, []string{"keys generate", "keys status", "keys rotate"}},
		{[]string{"keys", "rotate", "-h"}, []string{"Usage: paymentsd keys rotate", "-new-key-file FILE", "-old-data-key-file FILE", "-batch N", "run it again to resume"}},
		{[]string{"platform", "create", "-h"}, []string{"-data-key-file FILE", "$PAYMENTS_DATA_KEY", "-old-data-key-file FILE"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := runT(t, "", tt.args...)
			if r.code != 0 || r.stderr != "" {
				t.Errorf("exit status %d, stderr %q; want 0 and nothing", r.code, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, r.stdout)
				}
			}
		})
	}
}

func TestPlatformCreate(t *testing.T) {
	ctx := context.Background()
	for _, env := range []payments.Environment{payments.Sandbox, payments.Production} {
		t.Run(string(env), func(t *testing.T) {
			db := tempDB(t)
			args := []string{"platform", "create", "-db", db, "-name", "Acme <& Co>"}
			if env == payments.Production {
				args = append(args, "-env", "production")
			}
			r := runT(t, "", args...)
			if r.code != 0 || withoutKeyNote(t, r.stderr, db) != "" {
				t.Fatalf("exit status %d, stderr %q", r.code, r.stderr)
			}
			// Exactly the contract's fields: decodeLine refuses any other.
			var creds struct {
				PlatformID  uuid.UUID            `json:"platform_id"`
				Secret      string               `json:"secret"`
				Environment payments.Environment `json:"environment"`
			}
			decodeLine(t, r.stdout, &creds)
			if creds.PlatformID == uuid.Nil || creds.Secret == "" || creds.Environment != env {
				t.Fatalf("credentials %+v", creds)
			}

			// The credentials authenticate on a service of their environment only.
			target := "/api/platform/users/list"
			sig := payments.Sign(creds.Secret, "POST", target, []byte("{}"))
			svc := openDB(t, db, env)
			got, err := svc.AuthenticatePlatform(ctx, creds.PlatformID.String(), sig, "POST", target, []byte("{}"))
			if err != nil || got != creds.PlatformID {
				t.Errorf("AuthenticatePlatform = %v, %v", got, err)
			}
			other := payments.Production
			if env == payments.Production {
				other = payments.Sandbox
			}
			svc = openDB(t, db, other)
			if _, err := svc.AuthenticatePlatform(ctx, creds.PlatformID.String(), sig, "POST", target, []byte("{}")); payments.ErrorCode(err) != payments.CodeUnauthorized {
				t.Errorf("in %s: err = %v, want unauthorized", other, err)
			}
		})
	}
}

// A platform created with -require-timestamp says so, and its requests must carry a
// signed X-Timestamp.
func TestPlatformCreateRequireTimestamp(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	r := runT(t, "", "platform", "create", "-db", db, "-require-timestamp", "-name", "Acme")
	if r.code != 0 || !strings.HasPrefix(r.stderr, "paymentsd: created the data key file") {
		t.Fatalf("exit status %d, stderr %q", r.code, r.stderr)
	}
	var creds struct {
		PlatformID       uuid.UUID            `json:"platform_id"`
		Secret           string               `json:"secret"`
		Environment      payments.Environment `json:"environment"`
		RequireTimestamp bool                 `json:"require_timestamp"`
	}
	decodeLine(t, r.stdout, &creds)
	if !creds.RequireTimestamp || creds.Environment != payments.Sandbox {
		t.Fatalf("credentials %+v", creds)
	}
	if !strings.HasSuffix(r.stdout, `,"require_timestamp":true}`+"\n") {
		t.Errorf("stdout %q: want require_timestamp last, after the contract's fields", r.stdout)
	}

	svc := openDB(t, db, "")
	const target = "/api/platform/users/list"
	body := []byte("{}")
	req := payments.PlatformRequest{PlatformID: creds.PlatformID.String(), Method: "POST", Target: target, Body: body,
		Signature: payments.Sign(creds.Secret, "POST", target, body)}
	if _, err := svc.AuthenticatePlatformRequest(ctx, req); payments.ErrorMessage(err) != "Missing header X-Timestamp." {
		t.Errorf("without X-Timestamp: %v", err)
	}
	req.Timestamp = payments.Timestamp(time.Now())
	req.Signature = payments.SignTimestamped(creds.Secret, "POST", target, body, req.Timestamp)
	if got, err := svc.AuthenticatePlatformRequest(ctx, req); err != nil || got != creds.PlatformID {
		t.Errorf("with X-Timestamp: %v, %v", got, err)
	}
}

func TestAPIKeyCreate(t *testing.T) {
	t.Run("ErrUserNotFound", func(t *testing.T) {
		db := tempDB(t)
		r := runT(t, "", "apikey", "create", "-db", db, "-user", uuid.NewString())
		if r.code != 1 || r.stdout != "" {
			t.Errorf("exit status %d, stdout %q; want 1 and nothing", r.code, r.stdout)
		}
		if withoutKeyNote(t, r.stderr, db) != "paymentsd apikey create: User not found.\n" {
			t.Errorf("stderr = %q", r.stderr)
		}
	})
	t.Run("ErrDatabase", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "missing-dir", "payments.db")
		r := runT(t, "", "apikey", "create", "-db", db, "-user", uuid.NewString())
		if r.code != 1 {
			t.Errorf("exit status %d, want 1", r.code)
		}
		wantOneLine(t, "stderr", r.stderr, "paymentsd apikey create: ")
	})
	t.Run("OK", func(t *testing.T) {
		db := tempDB(t)
		svc := openDB(t, db, "")
		creds, user := newUser(t, svc)
		r := runT(t, "", "apikey", "create", "-db", db, "-user", strings.ToUpper(user.UserID.String()))
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("exit status %d, stderr %q", r.code, r.stderr)
		}
		var key struct {
			APIKey    string `json:"api_key"`
			APISecret string `json:"api_secret"`
		}
		decodeLine(t, r.stdout, &key)
		caller, err := svc.AuthenticateAPIKey(context.Background(), key.APIKey, key.APISecret)
		if err != nil || caller.UserID != user.UserID || caller.PlatformID != creds.PlatformID {
			t.Errorf("AuthenticateAPIKey = %+v, %v", caller, err)
		}
	})
}

func TestUserVerify(t *testing.T) {
	t.Run("ErrUserNotFound", func(t *testing.T) {
		db := tempDB(t)
		r := runT(t, "", "user", "verify", "-db", db, uuid.NewString())
		if r.code != 1 || r.stdout != "" || withoutKeyNote(t, r.stderr, db) != "paymentsd user verify: User not found.\n" {
			t.Errorf("got %+v", r)
		}
	})
	t.Run("OK", func(t *testing.T) {
		db := tempDB(t)
		_, user := newUser(t, openDB(t, db, ""))
		want := `{"user_id":"` + user.UserID.String() + `","verified":true}` + "\n"
		for i := range 2 { // a second verification is no error and says the same
			r := runT(t, "", "user", "verify", "-db", db, strings.ToUpper(user.UserID.String()))
			if r.code != 0 || r.stderr != "" || r.stdout != want {
				t.Errorf("run %d: got %+v, want stdout %q", i+1, r, want)
			}
		}
	})
}
