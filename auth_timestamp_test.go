package payments_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/pgtest"
)

// Issue 9: platforms that require a signed timestamp.

func TestSignTimestamped(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	target := "/api/platform/cross-border/rates?payout_currency=INR"
	body := []byte(`{"name":"Ada"}`)
	sum := sha256.Sum256(body)

	// The specification's string, then the X-Timestamp value as sent: no separator.
	want := "POST" + target + hex.EncodeToString(sum[:]) + "1795341600"
	if got := payments.StringToSignTimestamped("POST", target, body, "1795341600"); got != want {
		t.Errorf("StringToSignTimestamped = %q, want %q", got, want)
	}
	if got := payments.StringToSignTimestamped("POST", target, body, "1795341600"); got != payments.StringToSign("POST", target, body)+"1795341600" {
		t.Errorf("StringToSignTimestamped = %q, not StringToSign followed by the timestamp", got)
	}
	if got, want := payments.SignTimestamped(secret, "POST", target, body, "1795341600"), hmacHex(secret, want); got != want {
		t.Errorf("SignTimestamped = %s, want %s", got, want)
	}
	if payments.SignTimestamped(secret, "POST", target, body, "1795341600") == payments.Sign(secret, "POST", target, body) {
		t.Error("the timestamped signature equals the specification's")
	}

	for _, tc := range []struct {
		t    time.Time
		want string
	}{
		{time.Date(2026, 11, 22, 10, 0, 0, 999_999_999, time.UTC), "1795341600"}, // seconds, not rounded
		{time.Date(2026, 11, 22, 11, 0, 0, 0, time.FixedZone("CET", 3600)), "1795341600"},
		{time.Unix(0, 0), "0"},
	} {
		if got := payments.Timestamp(tc.t); got != tc.want {
			t.Errorf("Timestamp(%v) = %q, want %q", tc.t, got, tc.want)
		}
	}
}

func TestAuthenticatePlatformRequest_Timestamp(t *testing.T) {
	ctx := context.Background()
	// Half a second past a whole second: the window is counted in whole seconds.
	start := time.Date(2026, 11, 22, 10, 0, 0, 500_000_000, time.UTC)
	now, _ := fixedClock(start)
	path := newDSN(t)
	svc := mustOpenFile(t, path, payments.Options{Now: now})
	stamped, err := svc.CreatePlatform(ctx, "Stamped", "", payments.PlatformOptions{RequireTimestamp: true})
	if err != nil {
		t.Fatal(err)
	}
	plain := mustPlatform(t, svc)
	prod := mustOpen(t, payments.Options{Now: now, Environment: payments.Production})
	sandboxStamped, err := prod.CreatePlatform(ctx, "Sandbox", payments.Sandbox, payments.PlatformOptions{RequireTimestamp: true})
	if err != nil {
		t.Fatal(err)
	}
	narrow := mustOpenFile(t, path, payments.Options{Now: now, TimestampTolerance: 10 * time.Second})

	const method, target = "POST", "/api/platform/users/list"
	body := []byte(`{"page_no":1}`)
	unix := start.Unix()
	at := func(offset int64) string { return strconv.FormatInt(unix+offset, 10) }
	signed := func(p payments.PlatformCredentials, ts string) payments.PlatformRequest {
		return payments.PlatformRequest{PlatformID: p.PlatformID.String(), Timestamp: ts,
			Signature: payments.SignTimestamped(p.Secret, method, target, body, ts),
			Method:    method, Target: target, Body: body}
	}
	// specSigned is signed in the specification's form, whatever X-Timestamp says.
	specSigned := func(p payments.PlatformCredentials, ts string) payments.PlatformRequest {
		r := signed(p, ts)
		r.Signature = payments.Sign(p.Secret, method, target, body)
		return r
	}
	withSig := func(r payments.PlatformRequest, sig string) payments.PlatformRequest {
		r.Signature = sig
		return r
	}
	withID := func(r payments.PlatformRequest, id string) payments.PlatformRequest {
		r.PlatformID = id
		return r
	}
	wrongSig := payments.SignTimestamped("not-the-secret", method, target, body, at(0))

	const (
		missing   = "Missing header X-Timestamp."
		malformed = "Malformed header X-Timestamp: want Unix seconds."
		stale     = "Request timestamp outside the allowed window."
	)
	var generic string // the one message of every failure that does not prove the secret
	for _, tc := range []struct {
		name    string
		svc     *payments.Service
		req     payments.PlatformRequest
		wantID  uuid.UUID
		wantMsg string // "": the generic message
	}{
		{name: "OK", req: signed(stamped, at(0)), wantID: stamped.PlatformID},
		{name: "OKPast", req: signed(stamped, at(-299)), wantID: stamped.PlatformID},
		{name: "OKFuture", req: signed(stamped, at(299)), wantID: stamped.PlatformID},
		{name: "OKEdgePast", req: signed(stamped, at(-300)), wantID: stamped.PlatformID},
		{name: "OKEdgeFuture", req: signed(stamped, at(300)), wantID: stamped.PlatformID},
		{name: "OKLeadingZeros", req: signed(stamped, "0"+at(0)), wantID: stamped.PlatformID},
		{name: "OKUpperCaseHex", req: withSig(signed(stamped, at(0)), upper(signed(stamped, at(0)).Signature)), wantID: stamped.PlatformID},
		{name: "ErrMissing", req: specSigned(stamped, ""), wantMsg: missing},
		{name: "ErrStalePast", req: signed(stamped, at(-301)), wantMsg: stale},
		{name: "ErrStaleFuture", req: signed(stamped, at(301)), wantMsg: stale},
		{name: "ErrStaleZero", req: signed(stamped, "0"), wantMsg: stale},
		{name: "ErrStaleNegative", req: signed(stamped, "-"+at(0)), wantMsg: stale},
		{name: "ErrStaleMaxInt64", req: signed(stamped, "9223372036854775807"), wantMsg: stale},
		{name: "ErrStaleMinInt64", req: signed(stamped, "-9223372036854775808"), wantMsg: stale},
		{name: "ErrMalformedText", req: signed(stamped, "yesterday"), wantMsg: malformed},
		{name: "ErrMalformedFraction", req: signed(stamped, at(0)+".0"), wantMsg: malformed},
		{name: "ErrMalformedPlus", req: signed(stamped, "+"+at(0)), wantMsg: malformed},
		{name: "ErrMalformedMinus", req: signed(stamped, "-"), wantMsg: malformed},
		{name: "ErrMalformedSpace", req: signed(stamped, at(0)+" "), wantMsg: malformed},
		{name: "ErrMalformedExponent", req: signed(stamped, "1.7e9"), wantMsg: malformed},
		{name: "ErrStaleMilliseconds", req: signed(stamped, at(0)+"000"), wantMsg: stale}, // an integer, far in the future
		{name: "ErrMalformedOverflow", req: signed(stamped, "9223372036854775808"), wantMsg: malformed},
		{name: "ErrMalformedRFC3339", req: signed(stamped, start.Format(time.RFC3339)), wantMsg: malformed},

		// The signature comes first: without the secret, nothing about the timestamp.
		{name: "ErrMissingWrongSignature", req: withSig(specSigned(stamped, ""), payments.Sign("not-the-secret", method, target, body))},
		{name: "ErrMissingTimestampedSignature", req: withSig(specSigned(stamped, ""), payments.SignTimestamped(stamped.Secret, method, target, body, at(0)))},
		{name: "ErrStaleWrongSignature", req: withSig(signed(stamped, at(-301)), wrongSig)},
		{name: "ErrMalformedWrongSignature", req: withSig(signed(stamped, "yesterday"), wrongSig)},
		{name: "ErrFreshWrongSignature", req: withSig(signed(stamped, at(0)), wrongSig)},
		{name: "ErrTimestampNotSigned", req: specSigned(stamped, at(0))},
		{name: "ErrSignatureOfAnotherTimestamp", req: withSig(signed(stamped, at(1)), signed(stamped, at(0)).Signature)},
		{name: "ErrSignatureOfAnotherBody", req: withSig(signed(stamped, at(0)), payments.SignTimestamped(stamped.Secret, method, target, []byte(`{}`), at(0)))},
		{name: "ErrUnknownPlatform", req: withID(signed(stamped, at(0)), uuid.NewString())},
		{name: "ErrUnknownPlatformNoTimestamp", req: withID(specSigned(stamped, ""), uuid.NewString())},
		{name: "ErrOtherEnvironment", svc: prod, req: signed(sandboxStamped, at(0))},
		{name: "ErrOtherEnvironmentNoTimestamp", svc: prod, req: specSigned(sandboxStamped, "")},

		// A platform of the specification's scheme ignores X-Timestamp altogether.
		{name: "OKSpecPlatform", req: specSigned(plain, ""), wantID: plain.PlatformID},
		{name: "OKSpecPlatformIgnoresFresh", req: specSigned(plain, at(0)), wantID: plain.PlatformID},
		{name: "OKSpecPlatformIgnoresStale", req: specSigned(plain, at(-3600)), wantID: plain.PlatformID},
		{name: "OKSpecPlatformIgnoresMalformed", req: specSigned(plain, "yesterday"), wantID: plain.PlatformID},
		{name: "ErrSpecPlatformTimestampedSignature", req: signed(plain, at(0))},

		// The tolerance is the service's.
		{name: "OKNarrowWindowEdge", svc: narrow, req: signed(stamped, at(-10)), wantID: stamped.PlatformID},
		{name: "ErrNarrowWindowPast", svc: narrow, req: signed(stamped, at(-11)), wantMsg: stale},
		{name: "ErrNarrowWindowFuture", svc: narrow, req: signed(stamped, at(11)), wantMsg: stale},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := svc
			if tc.svc != nil {
				s = tc.svc
			}
			got, err := s.AuthenticatePlatformRequest(ctx, tc.req)
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
			if tc.wantMsg != "" {
				if e.Message != tc.wantMsg {
					t.Errorf("message %q, want %q", e.Message, tc.wantMsg)
				}
				return
			}
			checkAuthMessage(t, e.Message, "", &generic)
		})
	}
	if generic != "Invalid credentials." {
		t.Errorf("generic message %q", generic)
	}

	// AuthenticatePlatform is a request without X-Timestamp.
	t.Run("AuthenticatePlatform", func(t *testing.T) {
		r := specSigned(stamped, "")
		_, err := svc.AuthenticatePlatform(ctx, r.PlatformID, r.Signature, method, target, body)
		if e := errorOf(t, err, payments.CodeUnauthorized); e.Message != missing {
			t.Errorf("message %q, want %q", e.Message, missing)
		}
		r = specSigned(plain, "")
		if got, err := svc.AuthenticatePlatform(ctx, r.PlatformID, r.Signature, method, target, body); err != nil || got != plain.PlatformID {
			t.Errorf("spec platform: %v, %v", got, err)
		}
	})

	// The requirement is stored: a service opened afresh, its cache empty, enforces it.
	t.Run("Stored", func(t *testing.T) {
		again := mustOpenFile(t, path, payments.Options{Now: now})
		_, err := again.AuthenticatePlatformRequest(ctx, specSigned(stamped, ""))
		if e := errorOf(t, err, payments.CodeUnauthorized); e.Message != missing {
			t.Errorf("message %q, want %q", e.Message, missing)
		}
		if _, err := again.AuthenticatePlatformRequest(ctx, signed(stamped, at(0))); err != nil {
			t.Error(err)
		}
		db := rawDB(t, path)
		if n := queryInt(t, db, "SELECT CAST(require_timestamp AS INTEGER) FROM platforms WHERE id = $1", stamped.PlatformID.String()); n != 1 {
			t.Errorf("stamped platform: require_timestamp %d", n)
		}
		if n := queryInt(t, db, "SELECT CAST(require_timestamp AS INTEGER) FROM platforms WHERE id = $1", plain.PlatformID.String()); n != 0 {
			t.Errorf("spec platform: require_timestamp %d", n)
		}
	})

	// The clock is the service's: the same request goes stale as it moves on.
	t.Run("ClockMoves", func(t *testing.T) {
		clock, set := fixedClock(start)
		moving := mustOpenFile(t, path, payments.Options{Now: clock})
		r := signed(stamped, at(0))
		if _, err := moving.AuthenticatePlatformRequest(ctx, r); err != nil {
			t.Fatal(err)
		}
		set(start.Add(300 * time.Second))
		if _, err := moving.AuthenticatePlatformRequest(ctx, r); err != nil {
			t.Fatalf("after 300 s: %v", err)
		}
		set(start.Add(301 * time.Second))
		_, err := moving.AuthenticatePlatformRequest(ctx, r)
		if e := errorOf(t, err, payments.CodeUnauthorized); e.Message != stale {
			t.Errorf("after 301 s: message %q, want %q", e.Message, stale)
		}
	})
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func TestOpen_TimestampTolerance(t *testing.T) {
	for _, tc := range []struct {
		name string
		tol  time.Duration
		ok   bool
	}{
		{"OKDefault", 0, true},
		{"OKOneSecond", time.Second, true},
		{"OKTenMinutes", 10 * time.Minute, true},
		{"ErrNegative", -time.Second, false},
		{"ErrUnderASecond", 500 * time.Millisecond, false},
		{"ErrFraction", 1500 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := newDSN(t)
			svc, err := payments.Open(context.Background(), path, payments.Options{TimestampTolerance: tc.tol,
				KeyFile: pgtest.KeyFile(path)})
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				svc.Close()
				return
			}
			if err == nil {
				svc.Close()
				t.Fatal("Open succeeded")
			}
			errorOf(t, err, payments.CodeInvalid)
		})
	}
}

func TestCreatePlatform_RequireTimestamp(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t)
	keys := func(creds payments.PlatformCredentials) map[string]any {
		t.Helper()
		b, err := json.Marshal(creds)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}

	t.Run("OK", func(t *testing.T) {
		creds, err := svc.CreatePlatform(ctx, "Stamped", "", payments.PlatformOptions{RequireTimestamp: true})
		if err != nil {
			t.Fatal(err)
		}
		if !creds.RequireTimestamp {
			t.Error("RequireTimestamp not set in the credentials")
		}
		m := keys(creds)
		if len(m) != 4 || m["require_timestamp"] != true {
			t.Errorf("credentials %v, want platform_id, secret, environment and require_timestamp: true", m)
		}
	})
	// A platform of the specification's scheme prints what the contract says, exactly.
	for name, opts := range map[string][]payments.PlatformOptions{
		"OKWithoutOptions": nil,
		"OKZeroOptions":    {{}},
	} {
		t.Run(name, func(t *testing.T) {
			creds, err := svc.CreatePlatform(ctx, "Plain", "", opts...)
			if err != nil {
				t.Fatal(err)
			}
			m := keys(creds)
			if _, ok := m["require_timestamp"]; ok || len(m) != 3 {
				t.Errorf("credentials %v, want platform_id, secret and environment only", m)
			}
		})
	}
	t.Run("ErrTwoOptions", func(t *testing.T) {
		_, err := svc.CreatePlatform(ctx, "Twice", "", payments.PlatformOptions{}, payments.PlatformOptions{RequireTimestamp: true})
		errorOf(t, err, payments.CodeInvalid)
	})
}

// A database made before migration 0004 keeps its platforms on the specification's scheme.
func TestMigrateRequireTimestamp(t *testing.T) {
	sqliteOnly(t) // SQLite's migrations 0001-0004; PostgreSQL starts at the schema they leave
	ctx := context.Background()
	path := newDSN(t)
	db := rawDB(t, path)
	for _, name := range []string{"internal/store/sqlite/migrations/0001_init.sql", "internal/store/sqlite/migrations/0002_pw_id_per_platform.sql"} {
		sql, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(sql)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	id, secret := uuid.NewString(), "old-secret"
	if _, err := db.Exec(`PRAGMA user_version = 2; INSERT INTO platforms (id, name, environment, secret, created_at)
		VALUES ($1, 'Old', 'sandbox', $2, '2026-01-01T00:00:00.000000Z')`, id, secret); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	svc := mustOpenFile(t, path)
	const target = "/api/platform/users/list"
	sig := payments.Sign(secret, "POST", target, []byte("{}"))
	for _, ts := range []string{"", "0", "yesterday"} {
		got, err := svc.AuthenticatePlatformRequest(ctx, payments.PlatformRequest{
			PlatformID: id, Signature: sig, Timestamp: ts, Method: "POST", Target: target, Body: []byte("{}")})
		if err != nil || got.String() != id {
			t.Errorf("X-Timestamp %q: %v, %v", ts, got, err)
		}
	}
}
