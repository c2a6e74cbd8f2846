package payments_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// hmacHex computes the signature of message the long way, independently of the library.
func hmacHex(secret, message string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(message))
	return hex.EncodeToString(mac.Sum(nil))
}

func TestSign(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	id := "0f8fad5b-d9cb-469f-a165-70867728950e"

	t.Run("ContractExample", func(t *testing.T) {
		// CONTRACT.md section 2: GET of a user, no query, no body.
		target := "/api/platform/users/get/" + id
		want := "GET/api/platform/users/get/" + id + "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
		if got := payments.StringToSign("GET", target, nil); got != want {
			t.Errorf("StringToSign = %q, want %q", got, want)
		}
		if got, want := payments.Sign(secret, "GET", target, nil), hmacHex(secret, want); got != want {
			t.Errorf("Sign = %s, want %s", got, want)
		}
	})

	t.Run("QueryAndBody", func(t *testing.T) {
		target := "/api/platform/cross-border/rates?payout_currency=INR&x=%2F"
		body := []byte(`{"name":"Ada"}`)
		sum := sha256.Sum256(body)
		want := "POST" + target + hex.EncodeToString(sum[:])
		if got := payments.StringToSign("POST", target, body); got != want {
			t.Errorf("StringToSign = %q, want %q", got, want)
		}
		if got, want := payments.Sign(secret, "POST", target, body), hmacHex(secret, want); got != want {
			t.Errorf("Sign = %s, want %s", got, want)
		}
	})
}

func TestAuthenticatePlatform(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t)
	p := mustPlatform(t, svc)
	other := mustPlatform(t, svc)
	pid := p.PlatformID.String()

	// A sandbox platform presented to a production service.
	prodFile := newDSN(t)
	prod := mustOpenFile(t, prodFile, payments.Options{Environment: payments.Production})
	sandboxInProd, err := prod.CreatePlatform(ctx, "Sandbox platform", payments.Sandbox)
	if err != nil {
		t.Fatal(err)
	}

	var generic string // the one message of every failure but a missing header

	const method, target = "POST", "/api/platform/users/create"
	body := []byte(`{"name":"Ada","email":"ada@example.com"}`)
	sig := payments.Sign(p.Secret, method, target, body)

	for _, tc := range []struct {
		name      string
		svc       *payments.Service
		id, sig   string
		target    string
		wantID    uuid.UUID
		wantInMsg string // for missing headers: the header named; otherwise the generic text
	}{
		{name: "OK", id: pid, sig: sig, wantID: p.PlatformID},
		{name: "OKUpperCaseHex", id: pid, sig: strings.ToUpper(sig), wantID: p.PlatformID},
		{name: "OKQuery", id: pid, target: target + "?a=1&b=%2F",
			sig: payments.Sign(p.Secret, method, target+"?a=1&b=%2F", body), wantID: p.PlatformID},
		{name: "ErrMissingPlatformID", id: "", sig: sig, wantInMsg: payments.HeaderPlatformID},
		{name: "ErrMissingSignature", id: pid, sig: "", wantInMsg: payments.HeaderSignature},
		{name: "ErrMalformedPlatformID", id: "platform-1", sig: sig},
		{name: "ErrUnknownPlatform", id: uuid.NewString(), sig: sig},
		{name: "ErrOtherPlatformsSignature", id: other.PlatformID.String(), sig: sig},
		{name: "ErrWrongSecret", id: pid, sig: payments.Sign(other.Secret, method, target, body)},
		{name: "ErrSignatureNotHex", id: pid, sig: "not hex at all"},
		{name: "ErrTruncatedSignature", id: pid, sig: sig[:32]},
		{name: "ErrSignatureOfAnotherTarget", id: pid, sig: payments.Sign(p.Secret, method, "/api/platform/users/list", body)},
		{name: "ErrSignatureOfAnotherQuery", id: pid, target: target + "?a=2",
			sig: payments.Sign(p.Secret, method, target+"?a=1", body)},
		{name: "ErrSignatureOfAnotherMethod", id: pid, sig: payments.Sign(p.Secret, "PUT", target, body)},
		{name: "ErrSignatureOfAnotherBody", id: pid, sig: payments.Sign(p.Secret, method, target, []byte(`{"name":"Eve"}`))},
		{name: "ErrSignatureWithoutBody", id: pid, sig: payments.Sign(p.Secret, method, target, nil)},
		{name: "ErrOtherEnvironment", svc: prod, id: sandboxInProd.PlatformID.String(),
			sig: payments.Sign(sandboxInProd.Secret, method, target, body)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, tgt := svc, target
			if tc.svc != nil {
				s = tc.svc
			}
			if tc.target != "" {
				tgt = tc.target
			}
			got, err := s.AuthenticatePlatform(ctx, tc.id, tc.sig, method, tgt, body)
			if tc.wantID != uuid.Nil {
				if err != nil {
					t.Fatal(err)
				}
				if got != tc.wantID {
					t.Errorf("platform = %s, want %s", got, tc.wantID)
				}
				return
			}
			e := errorOf(t, err, payments.CodeUnauthorized)
			if got != uuid.Nil {
				t.Errorf("platform = %s on failure", got)
			}
			checkAuthMessage(t, e.Message, tc.wantInMsg, &generic)
		})
	}

	t.Run("OKProductionPlatform", func(t *testing.T) {
		pp := mustPlatform(t, prod)
		if pp.Environment != payments.Production {
			t.Fatalf("environment = %q, want production", pp.Environment)
		}
		if _, err := prod.AuthenticatePlatform(ctx, pp.PlatformID.String(), payments.Sign(pp.Secret, "GET", "/x", nil), "GET", "/x", nil); err != nil {
			t.Fatal(err)
		}
		// ... and refused by a sandbox service on the same file.
		sandbox := mustOpenFile(t, prodFile)
		_, err := sandbox.AuthenticatePlatform(ctx, pp.PlatformID.String(), payments.Sign(pp.Secret, "GET", "/x", nil), "GET", "/x", nil)
		checkAuthMessage(t, errorOf(t, err, payments.CodeUnauthorized).Message, "", &generic)
	})
}

// TestAuthenticatePlatform_Signatures: every request is judged as the specification's
// scheme says, worked out the long way (hmacHex, hex.DecodeString) beside the service's
// pooled HMAC states: bodies empty, nil and not, signatures in either case, of other
// lengths, or not hex; two platforms' states never mixed; the same verdicts from many
// goroutines at once (go test -race).
func TestAuthenticatePlatform_Signatures(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t)
	platforms := []payments.PlatformCredentials{mustPlatform(t, svc), mustPlatform(t, svc)}
	type request struct {
		platform       payments.PlatformCredentials
		method, target string
		body           []byte
		sig            string
	}
	var requests []request
	for _, p := range platforms {
		for _, r := range []struct {
			method, target string
			body           []byte
		}{
			{"GET", "/api/platform/users/get/" + uuid.NewString(), nil},
			{"GET", "/api/platform/users/get/" + uuid.NewString(), []byte{}},
			{"GET", "/api/platform/cross-border/rates?payout_currency=INR", nil},
			{"POST", "/api/platform/users/create", []byte(`{"name":"Ada"}`)},
			{"DELETE", "/api/platform/users/x/payee-banks/y", nil},
		} {
			right := payments.Sign(p.Secret, r.method, r.target, r.body)
			mixed := []byte(right)
			for i := 0; i < len(mixed); i += 2 {
				mixed[i] = strings.ToUpper(string(mixed[i]))[0]
			}
			other := platforms[0]
			if other == p {
				other = platforms[1]
			}
			for _, sig := range []string{
				right, strings.ToUpper(right), string(mixed),
				lastDigitChanged(right),
				right + "00", right[:62], right[:63], right + "0", "",
				right[:10] + "g" + right[11:], right[:63] + "x", strings.Repeat("zz", 32),
				payments.Sign(other.Secret, r.method, r.target, r.body),
				payments.Sign(p.Secret, r.method, r.target+"?", r.body),
			} {
				requests = append(requests, request{p, r.method, r.target, r.body, sig})
			}
		}
	}
	// right is the verdict worked out the long way.
	right := func(r request) bool {
		sig, err := hex.DecodeString(r.sig)
		want, _ := hex.DecodeString(hmacHex(r.platform.Secret, payments.StringToSign(r.method, r.target, r.body)))
		return r.sig != "" && err == nil && hmac.Equal(sig, want)
	}
	judge := func(r request) error {
		got, err := svc.AuthenticatePlatform(ctx, r.platform.PlatformID.String(), r.sig, r.method, r.target, r.body)
		switch {
		case right(r) && (err != nil || got != r.platform.PlatformID):
			return fmt.Errorf("%s %s signed %q: %v, %v; want the platform", r.method, r.target, r.sig, got, err)
		case !right(r) && payments.ErrorCode(err) != payments.CodeUnauthorized:
			return fmt.Errorf("%s %s signed %q: %v, %v; want unauthorized", r.method, r.target, r.sig, got, err)
		}
		return nil
	}
	for _, r := range requests {
		if err := judge(r); err != nil {
			t.Error(err)
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 4 * len(requests) {
				if err := judge(requests[(g*7+i)%len(requests)]); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// lastDigitChanged returns sig with another last hex digit.
func lastDigitChanged(sig string) string {
	if strings.HasSuffix(sig, "0") {
		return sig[:len(sig)-1] + "1"
	}
	return sig[:len(sig)-1] + "0"
}

// checkAuthMessage checks a 401's message: a missing header is named; every other failure
// has one and the same message (*generic, the first seen), which says nothing of which
// check failed.
func checkAuthMessage(t *testing.T, msg, header string, generic *string) {
	t.Helper()
	if header != "" {
		if !strings.Contains(msg, header) {
			t.Errorf("message %q does not name the missing header %s", msg, header)
		}
		return
	}
	if *generic == "" {
		*generic = msg
	}
	if msg != *generic {
		t.Errorf("message %q differs from %q: a failure tells which check failed", msg, *generic)
	}
	for _, leak := range []string{"unknown", "environment", "signature", "secret", "platform", "key", "sandbox", "production"} {
		if strings.Contains(strings.ToLower(msg), leak) {
			t.Errorf("message %q mentions %q", msg, leak)
		}
	}
}

func TestAuthenticateAPIKey(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t)
	p := mustPlatform(t, svc)
	u := mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")
	key, err := svc.CreateAPIKey(ctx, u.UserID.String())
	if err != nil {
		t.Fatal(err)
	}
	otherUser := mustUser(t, svc, p.PlatformID, "Bob", "bob@example.com")
	otherKey, err := svc.CreateAPIKey(ctx, otherUser.UserID.String())
	if err != nil {
		t.Fatal(err)
	}

	// A key of a sandbox platform's user presented to a production service.
	prod := mustOpen(t, payments.Options{Environment: payments.Production})
	sp, err := prod.CreatePlatform(ctx, "Sandbox platform", payments.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	su := mustUser(t, prod, sp.PlatformID, "Sam", "sam@example.com")
	sandboxKey, err := prod.CreateAPIKey(ctx, su.UserID.String())
	if err != nil {
		t.Fatal(err)
	}

	var generic string // the one message of every failure but a missing header
	for _, tc := range []struct {
		name      string
		svc       *payments.Service
		key, sec  string
		want      payments.Caller
		wantInMsg string
	}{
		{name: "OK", key: key.APIKey.String(), sec: key.APISecret,
			want: payments.Caller{UserID: u.UserID, PlatformID: p.PlatformID}},
		{name: "OKUpperCaseKey", key: strings.ToUpper(key.APIKey.String()), sec: key.APISecret,
			want: payments.Caller{UserID: u.UserID, PlatformID: p.PlatformID}},
		{name: "ErrMissingKey", key: "", sec: key.APISecret, wantInMsg: payments.HeaderAPIKey},
		{name: "ErrMissingSecret", key: key.APIKey.String(), sec: "", wantInMsg: payments.HeaderAPISecret},
		{name: "ErrMalformedKey", key: "key-1", sec: key.APISecret},
		{name: "ErrUnknownKey", key: uuid.NewString(), sec: key.APISecret},
		{name: "ErrWrongSecret", key: key.APIKey.String(), sec: otherKey.APISecret},
		{name: "ErrSecretPrefix", key: key.APIKey.String(), sec: key.APISecret[:len(key.APISecret)-1]},
		{name: "ErrSecretUpperCase", key: key.APIKey.String(), sec: strings.ToUpper(key.APISecret)},
		{name: "ErrOtherEnvironment", svc: prod, key: sandboxKey.APIKey.String(), sec: sandboxKey.APISecret},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := svc
			if tc.svc != nil {
				s = tc.svc
			}
			got, err := s.AuthenticateAPIKey(ctx, tc.key, tc.sec)
			if tc.want != (payments.Caller{}) {
				if err != nil {
					t.Fatal(err)
				}
				if got != tc.want {
					t.Errorf("caller = %+v, want %+v", got, tc.want)
				}
				return
			}
			e := errorOf(t, err, payments.CodeUnauthorized)
			if got != (payments.Caller{}) {
				t.Errorf("caller = %+v on failure", got)
			}
			checkAuthMessage(t, e.Message, tc.wantInMsg, &generic)
		})
	}
}

func TestCreateAPIKey(t *testing.T) {
	ctx := context.Background()
	path := newDSN(t)
	svc := mustOpenFile(t, path)
	p := mustPlatform(t, svc)
	u := mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")

	var secrets []string
	for range 3 {
		key, err := svc.CreateAPIKey(ctx, u.UserID.String())
		if err != nil {
			t.Fatal(err)
		}
		if len(key.APISecret) < 32 {
			t.Errorf("secret %q is short", key.APISecret)
		}
		secrets = append(secrets, key.APISecret)
	}

	t.Run("SecretNotStored", func(t *testing.T) {
		db := rawDB(t, path)
		rows, err := db.Query("SELECT * FROM api_credentials")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
			values := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range values {
				ptrs[i] = &values[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range values {
				var text string
				switch v := v.(type) {
				case []byte:
					text = string(v) + " " + hex.EncodeToString(v)
				default:
					text = fmt.Sprint(v)
				}
				for _, secret := range secrets {
					if strings.Contains(strings.ToLower(text), secret) {
						t.Errorf("column %s holds an issued secret", cols[i])
					}
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if n != len(secrets) {
			t.Errorf("%d credentials stored, want %d", n, len(secrets))
		}
	})

	t.Run("ErrMalformedUserID", func(t *testing.T) {
		_, err := svc.CreateAPIKey(ctx, "user-1")
		errorOf(t, err, payments.CodeInvalid)
	})
	t.Run("ErrUnknownUser", func(t *testing.T) {
		_, err := svc.CreateAPIKey(ctx, uuid.NewString())
		errorOf(t, err, payments.CodeNotFound)
	})
}

func TestCreatePlatform_Name(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t)
	tests := []struct {
		name     string
		platform string
		code     payments.Code
	}{
		{"OK", "Acme Payroll", ""},
		{"OKOtherScripts", "株式会社 Ａｃｍｅ 😀", ""},
		{"ErrEmpty", "", payments.CodeInvalid},
		{"ErrControl", "Acme\r\nPayroll", payments.CodeInvalid},
		{"ErrBidiOverride", "Acme \u202eyllorap", payments.CodeInvalid},
		{"ErrInvisible", "\u200b \u200b", payments.CodeInvalid},
		{"ErrInvalidUTF8", "Acme\xff", payments.CodeInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := svc.CreatePlatform(ctx, tt.platform, payments.Sandbox)
			if got := payments.ErrorCode(err); err != nil && got != tt.code || err == nil && tt.code != "" {
				t.Errorf("CreatePlatform(%+q): %v, want code %q", tt.platform, err, tt.code)
			}
		})
	}
}
