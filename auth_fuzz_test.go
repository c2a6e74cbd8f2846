package payments_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// Platform authentication under arbitrary requests, against a real store.
//
//	go test -run '^$' -fuzz FuzzAuthenticatePlatform -fuzztime 1m .
//
// Secrets and platform ids are new in each run, so a seed cannot hold a right signature:
// the bits of how make one (see authInput); the seed corpus in
// testdata/fuzz/FuzzAuthenticatePlatform covers each outcome docs/signing.md describes.

// The bits of how, the fuzz input that picks what the fuzzed strings are replaced with.
const (
	howPlatform  = 0b0000_0011 // the id: 0 as given, else authPlain, authStamped or authOther's
	howSignature = 0b0000_1100 // the signature: 0 as given, else authSign's (see below)
	howUpperSig  = 0b0001_0000 // the signature in upper-case hex
	howClock     = 0b0010_0000 // the timestamp: the service's clock moved by skew seconds
	howUpperID   = 0b0100_0000 // the id in upper case
)

// The platforms of the store, by the value of how&howPlatform.
const (
	authPlain   = 1 // the specification's scheme
	authStamped = 2 // requires signed timestamps
	authOther   = 3 // of the other environment (production, in a sandbox store)
)

// Signatures, by the value of (how&howSignature)>>2.
const (
	signPlain     = 1 // Sign under the secret of the platform named (authPlain's for an id given)
	signStamped   = 2 // SignTimestamped under the same secret, with the timestamp sent
	signWrongKey  = 3 // Sign under another platform's secret
	authWindowSec = int64(payments.DefaultTimestampTolerance / time.Second)
)

type authPlatform struct {
	creds            payments.PlatformCredentials
	requireTimestamp bool
	env              payments.Environment
}

// FuzzAuthenticatePlatform: AuthenticatePlatformRequest never panics, and it succeeds, with
// the platform's id, exactly when the rule of docs/signing.md says: both headers, an id
// that names a platform of the service's environment, and a signature (hex in either case)
// equal to Sign of the method, target and body under that platform's secret; for a platform
// that requires signed timestamps, SignTimestamped with X-Timestamp, which must be decimal
// Unix seconds within the window of the service's clock. Every failure is CodeUnauthorized
// with the message of the first rule broken, and says nothing of the timestamp to a wrong
// signature.
func FuzzAuthenticatePlatform(f *testing.F) {
	svc, platforms, now := authFixture(f)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, method, target string, body []byte, platformID, signature, timestamp string, how uint8, skew int16) {
		r := authInput(platforms, now, payments.PlatformRequest{
			PlatformID: platformID, Signature: signature, Timestamp: timestamp,
			Method: method, Target: target, Body: body,
		}, how, skew)
		wantID, wantMsg := authRule(platforms, now, r)
		id, err := svc.AuthenticatePlatformRequest(ctx, r)
		if wantMsg == "" {
			if err != nil || id != wantID {
				t.Fatalf("%+v: %v, %v; want success as %v", r, id, err, wantID)
			}
			return
		}
		if payments.ErrorCode(err) != payments.CodeUnauthorized || payments.ErrorMessage(err) != wantMsg || id != uuid.Nil {
			t.Fatalf("%+v: %v, %v; want CodeUnauthorized %q", r, id, err, wantMsg)
		}
	})
}

// authFixture is a sandbox service on a fixed clock with a platform of each kind of
// authPlatform, by kind.
func authFixture(tb testing.TB) (*payments.Service, map[int]authPlatform, time.Time) {
	tb.Helper()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	svc := mustOpen(tb, payments.Options{Now: func() time.Time { return now }})
	platforms := map[int]authPlatform{}
	for which, p := range map[int]struct {
		env  payments.Environment
		opts payments.PlatformOptions
	}{
		authPlain:   {payments.Sandbox, payments.PlatformOptions{}},
		authStamped: {payments.Sandbox, payments.PlatformOptions{RequireTimestamp: true}},
		authOther:   {payments.Production, payments.PlatformOptions{}},
	} {
		creds, err := svc.CreatePlatform(context.Background(), "Fuzz platform", p.env, p.opts)
		if err != nil {
			tb.Fatal(err)
		}
		platforms[which] = authPlatform{creds: creds, requireTimestamp: p.opts.RequireTimestamp, env: p.env}
	}
	return svc, platforms, now
}

// TestAuthenticatePlatformSeeds keeps the seed corpus covering every outcome
// docs/signing.md describes: a success of each scheme and each failure's message.
func TestAuthenticatePlatformSeeds(t *testing.T) {
	_, platforms, now := authFixture(t)
	dir := filepath.Join("testdata", "fuzz", "FuzzAuthenticatePlatform")
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	reached := map[string]bool{}
	for _, file := range files {
		v := readCorpusFile(t, filepath.Join(dir, file.Name()))
		if len(v) != 8 {
			t.Fatalf("%s: %d values, want 8", file.Name(), len(v))
		}
		how, err1 := strconv.ParseUint(v[6], 10, 8)
		skew, err2 := strconv.ParseInt(v[7], 10, 16)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: how %q, skew %q", file.Name(), v[6], v[7])
		}
		r := authInput(platforms, now, payments.PlatformRequest{
			Method: v[0], Target: v[1], Body: []byte(v[2]), PlatformID: v[3], Signature: v[4], Timestamp: v[5],
		}, uint8(how), int16(skew))
		id, msg := authRule(platforms, now, r)
		switch id {
		case platforms[authPlain].creds.PlatformID:
			msg = "success of the specification's scheme"
		case platforms[authStamped].creds.PlatformID:
			msg = "success with a signed timestamp"
		}
		reached[msg] = true
	}
	for _, outcome := range []string{
		"success of the specification's scheme", "success with a signed timestamp",
		"Missing header X-Platform-ID.", "Missing header X-Signature.", "Invalid credentials.",
		"Missing header X-Timestamp.", "Malformed header X-Timestamp: want Unix seconds.",
		"Request timestamp outside the allowed window.",
	} {
		if !reached[outcome] {
			t.Errorf("no seed in %s reaches %q", dir, outcome)
		}
	}
}

// authInput is the request a fuzz input stands for: r with its id, signature and timestamp
// replaced as the bits of how say.
func authInput(platforms map[int]authPlatform, now time.Time, r payments.PlatformRequest, how uint8, skew int16) payments.PlatformRequest {
	named, ok := platforms[int(how&howPlatform)]
	if ok {
		r.PlatformID = named.creds.PlatformID.String()
	} else {
		named = platforms[authPlain]
	}
	if how&howUpperID != 0 {
		r.PlatformID = strings.ToUpper(r.PlatformID)
	}
	if how&howClock != 0 {
		r.Timestamp = strconv.FormatInt(now.Unix()+int64(skew), 10)
	}
	switch (how & howSignature) >> 2 {
	case signPlain:
		r.Signature = payments.Sign(named.creds.Secret, r.Method, r.Target, r.Body)
	case signStamped:
		r.Signature = payments.SignTimestamped(named.creds.Secret, r.Method, r.Target, r.Body, r.Timestamp)
	case signWrongKey:
		other := platforms[authStamped]
		if named.creds.PlatformID == other.creds.PlatformID {
			other = platforms[authPlain]
		}
		r.Signature = payments.Sign(other.creds.Secret, r.Method, r.Target, r.Body)
	}
	if how&howUpperSig != 0 {
		r.Signature = strings.ToUpper(r.Signature)
	}
	return r
}

var unixSeconds = regexp.MustCompile(`^-?[0-9]+$`)

// authRule is what authentication must answer r, restated from docs/signing.md: the
// platform's id, or the message of the failure.
func authRule(platforms map[int]authPlatform, now time.Time, r payments.PlatformRequest) (uuid.UUID, string) {
	const badCredentials = "Invalid credentials."
	switch {
	case r.PlatformID == "":
		return uuid.Nil, "Missing header X-Platform-ID."
	case r.Signature == "":
		return uuid.Nil, "Missing header X-Signature."
	}
	id, err := uuid.Parse(r.PlatformID)
	if err != nil {
		return uuid.Nil, badCredentials
	}
	var p authPlatform
	found := false
	for _, candidate := range platforms {
		if candidate.creds.PlatformID == id {
			p, found = candidate, true
		}
	}
	if !found || p.env != payments.Sandbox {
		return uuid.Nil, badCredentials
	}
	want := payments.Sign(p.creds.Secret, r.Method, r.Target, r.Body)
	if p.requireTimestamp && r.Timestamp != "" {
		want = payments.SignTimestamped(p.creds.Secret, r.Method, r.Target, r.Body, r.Timestamp)
	}
	sent, err := hex.DecodeString(r.Signature)
	wantBytes, _ := hex.DecodeString(want) // Sign writes hex
	if err != nil || !bytes.Equal(sent, wantBytes) {
		return uuid.Nil, badCredentials
	}
	if !p.requireTimestamp {
		return id, ""
	}
	if r.Timestamp == "" {
		return uuid.Nil, "Missing header X-Timestamp."
	}
	ts, err := strconv.ParseInt(r.Timestamp, 10, 64)
	if !unixSeconds.MatchString(r.Timestamp) || err != nil {
		return uuid.Nil, "Malformed header X-Timestamp: want Unix seconds."
	}
	if ts < now.Unix()-authWindowSec || ts > now.Unix()+authWindowSec {
		return uuid.Nil, "Request timestamp outside the allowed window."
	}
	return id, ""
}
