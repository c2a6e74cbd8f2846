package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/httpserver"
)

// TestCall runs call against the real handler: the signature must match what the
// server sees, query strings and escapes included.
func TestCall(t *testing.T) {
	svc := openDB(t, tempDB(t), "")
	creds, user := newUser(t, svc)
	srv := httptest.NewServer(httpserver.New(svc, nil))
	defer srv.Close()
	bodyFile := filepath.Join(t.TempDir(), "user.json")
	if err := os.WriteFile(bodyFile, []byte(`{"name":"Eve","email":"eve@example.com"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	signed := []string{"call", "-url", srv.URL + "/", "-platform", creds.PlatformID.String(), "-secret", creds.Secret}
	get := "/api/platform/users/get/" + user.UserID.String()

	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		status string // "HTTP ..." line on stderr, "" for a 2xx
		want   string // in stdout
	}{
		{"CreateUser", "", []string{"post", "/api/platform/users/create", `{"name":"Bob","email":"bob@example.com"}`}, 0, "", `"name":"Bob"`},
		{"BodyFromFile", "", []string{"POST", "/api/platform/users/create", "@" + bodyFile}, 0, "", `"name":"Eve"`},
		{"BodyFromStdin", `{"name":"Kim","phone":"5551234","phone_country_code":"+1"}`, []string{"POST", "/api/platform/users/create", "@-"}, 0, "", `"name":"Kim"`},
		{"Invalid", "", []string{"POST", "/api/platform/users/create", `{"email":"x@example.com"}`}, 1, "HTTP 422 Unprocessable Entity", `{"detail":[{"type":"missing","loc":["body","name"]`},
		{"Conflict", "", []string{"POST", "/api/platform/users/create", `{"name":"Ada","email":"ADA@example.com"}`}, 1, "HTTP 409 Conflict", `"success":false`},
		{"QueryString", "", []string{"POST", "/api/platform/users/list?page=1&note=a%20b&t=%7e", `{"rows_per_page":10}`}, 0, "", `"totalRecords":`},
		{"GetWithQuery", "", []string{"GET", get + "?x=%2F&y"}, 0, "", `"user_id":"` + user.UserID.String() + `"`},
		// Signed and sent unchanged, so the server gets past authentication to the 422.
		{"EscapedPath", "", []string{"GET", "/api/platform/users/get/abc%2Fdef"}, 1, "HTTP 422 Unprocessable Entity", `"input":"abc/def"`},
		{"RawUTF8Path", "", []string{"GET", "/api/platform/users/get/ü?q=é"}, 1, "HTTP 422 Unprocessable Entity", `"type":"uuid_parsing"`},
		{"MediaTypeOverride", "", []string{"-header", "content-type: text/plain", "POST", "/api/platform/users/create", `{"name":"X"}`}, 1, "HTTP 415 Unsupported Media Type", `"success":false`},
		{"UnknownRoute", "", []string{"GET", "/api/nowhere"}, 1, "HTTP 404 Not Found", `"message":"Not found."`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Flags first: tt.args may add -header before the positional arguments.
			args := append(append([]string{}, signed...), tt.args...)
			r := runT(t, tt.stdin, args...)
			if r.code != tt.code {
				t.Errorf("exit status %d, want %d (stderr %q)", r.code, tt.code, r.stderr)
			}
			if tt.status == "" && r.stderr != "" {
				t.Errorf("stderr = %q, want nothing", r.stderr)
			}
			if tt.status != "" && r.stderr != tt.status+"\n" {
				t.Errorf("stderr = %q, want %q", r.stderr, tt.status)
			}
			wantOneLine(t, "stdout", r.stdout, tt.want)
			if !json.Valid([]byte(r.stdout)) {
				t.Errorf("stdout is not the JSON body: %q", r.stdout)
			}
		})
	}

	t.Run("WrongSecret", func(t *testing.T) {
		r := runT(t, "", "call", "-url", srv.URL, "-platform", creds.PlatformID.String(), "-secret", "00", "GET", get)
		if r.code != 1 || r.stderr != "HTTP 401 Unauthorized\n" || !strings.Contains(r.stdout, "Invalid credentials.") {
			t.Errorf("got %+v", r)
		}
	})
	// A platform that requires timestamps, against the real server.
	stamped, err := svc.CreatePlatform(context.Background(), "Stamped", "", payments.PlatformOptions{RequireTimestamp: true})
	if err != nil {
		t.Fatal(err)
	}
	list := []string{"POST", "/api/platform/users/list", "{}"}
	stampedCall := []string{"call", "-url", srv.URL, "-platform", stamped.PlatformID.String(), "-secret", stamped.Secret}
	unix := func(offset int64) string { return strconv.FormatInt(time.Now().Unix()+offset, 10) }
	for _, tt := range []struct {
		name   string
		args   []string // up to the flags
		code   int
		status string
		want   string
	}{
		{"StampedOK", append(stampedCall, "-timestamp"), 0, "", `"totalRecords":0`},
		{"StampedOKAt", append(stampedCall, "-timestamp-at", unix(-60)), 0, "", `"totalRecords":0`},
		{"StampedMissing", stampedCall, 1, "HTTP 401 Unauthorized", `"message":"Missing header X-Timestamp."`},
		{"StampedStale", append(stampedCall, "-timestamp-at", unix(-3600)), 1, "HTTP 401 Unauthorized", `"message":"Request timestamp outside the allowed window."`},
		{"StampedFuture", append(stampedCall, "-timestamp-at", unix(3600)), 1, "HTTP 401 Unauthorized", `"message":"Request timestamp outside the allowed window."`},
		// A platform of the specification's scheme ignores X-Timestamp and verifies the
		// specification's form, which a timestamped signature is not.
		{"SpecPlatform", append(signed, "-timestamp"), 1, "HTTP 401 Unauthorized", `"message":"Invalid credentials."`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{}, tt.args...), list...)
			r := runT(t, "", args...)
			wantStderr := ""
			if tt.status != "" {
				wantStderr = tt.status + "\n"
			}
			if r.code != tt.code || r.stderr != wantStderr {
				t.Errorf("exit status %d, stderr %q; want %d, %q", r.code, r.stderr, tt.code, wantStderr)
			}
			wantOneLine(t, "stdout", r.stdout, tt.want)
		})
	}
	t.Run("APIKey", func(t *testing.T) {
		r := runT(t, "", "call", "-url", srv.URL, "-api-key", uuid.NewString(), "-api-secret", "nope", "POST", "/api/user-api/payee/create", `{"name":"P"}`)
		if r.code != 1 || r.stderr != "HTTP 401 Unauthorized\n" || !strings.Contains(r.stdout, "Invalid credentials.") {
			t.Errorf("got %+v", r)
		}
	})
	t.Run("ErrNetwork", func(t *testing.T) {
		closed := httptest.NewServer(http.NotFoundHandler())
		closed.Close()
		r := runT(t, "", "call", "-url", closed.URL, "-platform", creds.PlatformID.String(), "-secret", creds.Secret, "GET", get)
		if r.code != 1 || r.stdout != "" {
			t.Errorf("exit status %d, stdout %q; want 1 and nothing", r.code, r.stdout)
		}
		wantOneLine(t, "stderr", r.stderr, "paymentsd call: GET "+closed.URL+get+": ")
	})
	t.Run("ErrBodyFile", func(t *testing.T) {
		r := runT(t, "", append(signed, "POST", "/api/platform/users/create", "@"+filepath.Join(t.TempDir(), "absent.json"))...)
		if r.code != 1 || r.stdout != "" {
			t.Errorf("exit status %d, stdout %q; want 1 and nothing", r.code, r.stdout)
		}
		wantOneLine(t, "stderr", r.stderr, "paymentsd call: reading the body: ")
	})
}

// TestCallSends checks the request call writes, byte for byte where it matters.
func TestCallSends(t *testing.T) {
	type seen struct {
		method, target string
		header         http.Header
		body           string
	}
	var got seen
	reply := struct {
		status int
		body   string
	}{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = seen{r.Method, r.RequestURI, r.Header.Clone(), string(b)}
		w.WriteHeader(reply.status)
		io.WriteString(w, reply.body)
	}))
	defer srv.Close()

	platform := uuid.NewString()
	tests := []struct {
		name       string
		args       []string
		status     int
		body       string
		wantCode   int
		wantStdout string
		wantHeader map[string]string // "" means absent
	}{
		{
			name:       "Signed",
			args:       []string{"-platform", platform, "-secret", "s3cret", "get", "/a/b%2Fc?x=1&y=%7E&z"},
			status:     200,
			body:       `{"ok":true}`,
			wantStdout: "{\"ok\":true}\n",
			wantHeader: map[string]string{
				"X-Platform-ID": platform,
				"X-Signature":   payments.Sign("s3cret", "GET", "/a/b%2Fc?x=1&y=%7E&z", nil),
				"Content-Type":  "",
				"X-Api-Key":     "",
				"X-Timestamp":   "",
			},
		},
		{
			name:       "SignedTimestampAt",
			args:       []string{"-platform", platform, "-secret", "s3cret", "-timestamp-at", "1795341600", "POST", "/p?q=%2F", `{"a":1}`},
			status:     200,
			body:       "ok",
			wantStdout: "ok\n",
			wantHeader: map[string]string{
				"X-Platform-ID": platform,
				"X-Timestamp":   "1795341600",
				"X-Signature":   payments.SignTimestamped("s3cret", "POST", "/p?q=%2F", []byte(`{"a":1}`), "1795341600"),
			},
		},
		{
			name:       "SignedTimestampAtNegative",
			args:       []string{"-platform", platform, "-secret", "s3cret", "-timestamp-at", "-0005", "GET", "/p"},
			status:     401,
			wantCode:   1,
			wantStdout: "",
			wantHeader: map[string]string{
				"X-Timestamp": "-5",
				"X-Signature": payments.SignTimestamped("s3cret", "GET", "/p", nil, "-5"),
			},
		},
		{
			name:       "SignedBody",
			args:       []string{"-platform", platform, "-secret", "s3cret", "POST", "/p?", `{"a":1}`},
			status:     201,
			body:       "done\n",
			wantStdout: "done\n",
			wantHeader: map[string]string{
				"X-Signature":  payments.Sign("s3cret", "POST", "/p?", []byte(`{"a":1}`)),
				"Content-Type": "application/json",
			},
		},
		{
			name:       "APIKey",
			args:       []string{"-api-key", "k", "-api-secret", "s", "-header", "X-Request-ID: abc", "-header", "Accept:  text/plain ", "DELETE", "/x", "{}"},
			status:     204,
			wantStdout: "",
			wantHeader: map[string]string{
				"X-Api-Key":     "k",
				"X-Api-Secret":  "s",
				"X-Request-Id":  "abc",
				"Accept":        "text/plain",
				"X-Platform-Id": "",
				"X-Signature":   "",
			},
		},
		{
			name:       "HeaderReplaces",
			args:       []string{"-api-key", "k", "-api-secret", "s", "-header", "Content-Type: text/csv", "-header", "x-api-key:", "PUT", "/x", "a,b"},
			status:     500,
			body:       "oops",
			wantCode:   1,
			wantStdout: "oops\n",
			wantHeader: map[string]string{"Content-Type": "text/csv", "X-Api-Key": "", "X-Api-Secret": "s"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply.status, reply.body = tt.status, tt.body
			args := append([]string{"call", "-url", srv.URL}, tt.args...)
			r := runT(t, "", args...)
			if r.code != tt.wantCode || r.stdout != tt.wantStdout {
				t.Errorf("exit status %d, stdout %q; want %d, %q (stderr %q)", r.code, r.stdout, tt.wantCode, tt.wantStdout, r.stderr)
			}
			n := len(tt.args)
			method, target, body := strings.ToUpper(tt.args[n-3]), tt.args[n-2], tt.args[n-1]
			if !strings.HasPrefix(target, "/") { // no BODY argument
				method, target, body = strings.ToUpper(tt.args[n-2]), tt.args[n-1], ""
			}
			if got.method != method || got.target != target || got.body != body {
				t.Errorf("server saw %s %s %q, want %s %s %q", got.method, got.target, got.body, method, target, body)
			}
			for name, want := range tt.wantHeader {
				if v := got.header.Get(name); v != want {
					t.Errorf("header %s = %q, want %q", name, v, want)
				}
			}
		})
	}
	// -timestamp sends the current time, and the signature covers it.
	t.Run("SignedTimestamp", func(t *testing.T) {
		reply.status, reply.body = 200, ""
		before := time.Now().Unix()
		r := runT(t, "", "call", "-url", srv.URL, "-platform", platform, "-secret", "s3cret", "-timestamp", "GET", "/p")
		after := time.Now().Unix()
		if r.code != 0 {
			t.Fatalf("exit status %d, stderr %q", r.code, r.stderr)
		}
		ts := got.header.Get("X-Timestamp")
		n, err := strconv.ParseInt(ts, 10, 64)
		if err != nil || n < before || n > after {
			t.Errorf("X-Timestamp %q, want Unix seconds from %d to %d", ts, before, after)
		}
		if sig := got.header.Get("X-Signature"); sig != payments.SignTimestamped("s3cret", "GET", "/p", nil, ts) {
			t.Errorf("X-Signature %s does not sign X-Timestamp %s", sig, ts)
		}
	})
}
