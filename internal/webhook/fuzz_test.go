package webhook_test

import (
	"encoding/base64"
	"errors"
	"math"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/platform-payments/payments/internal/webhook"
)

// Fuzz targets. Each has a seed corpus in testdata/fuzz/<name>, which go test runs as
// tests; to fuzz one:
//
//	go test -run '^$' -fuzz FuzzVerify -fuzztime 1m ./internal/webhook

// FuzzVerify: Verify of any headers and body never panics, fails with one of its errors,
// and accepts only what Sign writes: a canonical timestamp within tolerance and, among the
// signatures, Sign's under the secret for that id, time and body. The seeds include the
// specification's example and a rotation, so the fuzzer starts from deliveries that verify.
func FuzzVerify(f *testing.F) {
	secret := mustParse(f, specSecret)
	f.Fuzz(func(t *testing.T, id, ts, sigs string, body []byte, idKey string) {
		header := map[string][]string{
			idKey:               {id},
			"Webhook-Timestamp": {ts},
			"webhook-signature": {sigs},
		}
		err := webhook.Verify(secret, header, body, 5*time.Minute, specTime)
		if err != nil {
			for _, known := range []error{webhook.ErrMissingHeader, webhook.ErrInvalidHeader, webhook.ErrTimestampTooOld, webhook.ErrTimestampTooNew, webhook.ErrNoMatchingSignature} {
				if errors.Is(err, known) {
					return
				}
			}
			t.Fatalf("Verify: an error of no kind: %v", err)
		}
		if !strings.EqualFold(idKey, "webhook-id") {
			t.Fatalf("Verify passed with the id under %q", idKey)
		}
		sec, perr := strconv.ParseInt(ts, 10, 64)
		if perr != nil || strconv.FormatInt(sec, 10) != ts || sec < specTimestamp-300 || sec > specTimestamp+300 {
			t.Fatalf("Verify passed with the timestamp %q", ts)
		}
		want := webhook.Sign(id, time.Unix(sec, 0), body, secret)
		if !strings.Contains(" "+sigs+" ", " "+want+" ") {
			t.Fatalf("Verify passed signatures %q without Sign's %q", sigs, want)
		}
	})
}

// FuzzParseSecret: ParseSecret of any text never panics; it refuses with ErrInvalidSecret
// and a message that shows none of the text, or accepts a whsec_ secret of 24 to 64 bytes,
// a whsk_ key of 32 (or 64) bytes or a whpk_ key of 32 bytes, which Text writes back as
// it was given (surrounding white space aside; a 64-byte whsk_ key as its 32-byte seed).
func FuzzParseSecret(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		s, err := webhook.ParseSecret(text)
		if err != nil {
			if !errors.Is(err, webhook.ErrInvalidSecret) {
				t.Fatalf("ParseSecret(%q): %v", text, err)
			}
			// A fragment long enough not to be one of the message's own words.
			body := strings.TrimSpace(text)
			for _, p := range []string{"whsec_", "whsk_", "whpk_"} {
				body = strings.TrimPrefix(body, p)
			}
			if len(body) >= 12 && strings.Contains(err.Error(), body[:12]) {
				t.Fatalf("ParseSecret(%q)'s error %q shows the text", text, err)
			}
			return
		}
		prefix, _, _ := strings.Cut(s.Text(), "_")
		key, derr := base64.StdEncoding.DecodeString(strings.TrimPrefix(s.Text(), prefix+"_"))
		full, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(strings.TrimSpace(text), prefix+"_"))
		switch {
		case prefix == "whsk" && len(full) == 64 && derr == nil && len(key) == 32:
			if !strings.HasPrefix(strings.TrimSpace(text), "whsk_") || string(full[:32]) != string(key) {
				t.Fatalf("ParseSecret(%q).Text() = %q", text, s.Text())
			}
		case s.Text() != strings.TrimSpace(text):
			t.Fatalf("ParseSecret(%q).Text() = %q", text, s.Text())
		case prefix == "whsec" && (derr != nil || len(key) < webhook.MinSecretSize || len(key) > webhook.MaxSecretSize),
			prefix != "whsec" && (derr != nil || len(key) != 32):
			t.Fatalf("ParseSecret(%q) accepted a key of %d bytes (%v)", text, len(key), derr)
		}
	})
}

// FuzzCheckURL: CheckURL of any text never panics, refuses with a *URLError whose message
// does not repeat the URL, and accepts only an absolute http(s) URL (https in production)
// of at most 2,048 characters with a host, no user information, and no refused IP-literal
// host.
func FuzzCheckURL(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw string, production bool) {
		err := webhook.CheckURL(raw, production)
		if err != nil {
			var e *webhook.URLError
			if !errors.As(err, &e) {
				t.Fatalf("CheckURL(%q): %v", raw, err)
			}
			if len(raw) >= 8 && strings.Contains(e.Msg, raw) {
				t.Fatalf("CheckURL(%q)'s message %q repeats it", raw, e.Msg)
			}
			return
		}
		u, perr := url.Parse(raw)
		switch {
		case perr != nil:
			t.Fatalf("CheckURL accepted %q, which does not parse: %v", raw, perr)
		case utf8.RuneCountInString(raw) > webhook.MaxURLLength:
			t.Fatalf("CheckURL accepted %d characters", utf8.RuneCountInString(raw))
		case u.Scheme != "https" && (production || u.Scheme != "http"):
			t.Fatalf("CheckURL(%q, %v) accepted the scheme %q", raw, production, u.Scheme)
		case u.User != nil || u.Hostname() == "":
			t.Fatalf("CheckURL accepted %q: user %v, host %q", raw, u.User, u.Hostname())
		}
		if ip := parseIP(u.Hostname()); ip != nil {
			if err := webhook.CheckAddr(*ip); err != nil {
				t.Fatalf("CheckURL accepted %q, whose host CheckAddr refuses: %v", raw, err)
			}
		}
	})
}

func parseIP(host string) *netip.Addr {
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return nil
	}
	return &addr
}

// FuzzParseSchedule: ParseSchedule of any text never panics; it refuses with
// ErrInvalidSchedule and a message that names an entry (or says the schedule is empty or
// too long), or accepts 1 to MaxScheduleLength delays, each more than 0, whose String
// reads back as the same schedule; and every Delay of it is within ±20% of its step, or
// within [step, 2×step] under a Retry-After, until the schedule is exhausted.
func FuzzParseSchedule(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		s, err := webhook.ParseSchedule(text)
		if err != nil {
			if !errors.Is(err, webhook.ErrInvalidSchedule) {
				t.Fatalf("ParseSchedule(%q): %v", text, err)
			}
			if msg := err.Error(); !strings.Contains(msg, ": entry ") && !strings.HasSuffix(msg, ": empty") && !strings.Contains(msg, " delays, more than ") {
				t.Fatalf("ParseSchedule(%q)'s error %q names no entry", text, err)
			}
			return
		}
		if len(s) == 0 || len(s) > webhook.MaxScheduleLength {
			t.Fatalf("ParseSchedule(%q) accepted %d delays", text, len(s))
		}
		for i, d := range s {
			if d <= 0 {
				t.Fatalf("ParseSchedule(%q) accepted the delay %v at %d", text, d, i+1)
			}
		}
		again, err := webhook.ParseSchedule(s.String())
		if err != nil || !slices.Equal(again, s) {
			t.Fatalf("ParseSchedule(%q).String() = %q, which reads as %v, %v", text, s.String(), again, err)
		}
		for i, step := range s {
			for _, r := range []float64{0, 0.5, 0.9999999999} {
				got, ok := s.Delay(i+1, 0, func() float64 { return r })
				slack := step>>50 + 1 // float64's rounding of the jitter
				if lo, hi := step-step/5-slack, step+min(step/5+slack, math.MaxInt64-step); !ok || got < lo || got > hi {
					t.Fatalf("%v.Delay(%d) with rnd %v = %v, %v; want within [%v, %v]", s, i+1, r, got, ok, lo, hi)
				}
			}
			if got, ok := s.Delay(i+1, time.Nanosecond, nil); !ok || got != step {
				t.Fatalf("%v.Delay(%d) with a Retry-After of 1ns = %v, %v; want %v", s, i+1, got, ok, step)
			}
			if got, ok := s.Delay(i+1, math.MaxInt64, nil); !ok || got < step || (step <= math.MaxInt64/2 && got != 2*step) {
				t.Fatalf("%v.Delay(%d) with the longest Retry-After = %v, %v; want %v", s, i+1, got, ok, 2*step)
			}
		}
		if _, ok := s.Delay(len(s)+1, 0, nil); ok {
			t.Fatalf("%v is not exhausted after %d failures", s, len(s)+1)
		}
	})
}

// FuzzVerifyV1a: Verify under an ed25519 public key of any headers and body never panics,
// fails with one of its errors, and accepts only a canonical timestamp within tolerance
// with, among the signatures, the v1a signature Sign writes under the private key. The
// seeds include a vector of testdata/v1a_vectors.json and a rotation.
func FuzzVerifyV1a(f *testing.F) {
	private := mustParse(f, "whsk_j1nSxOIeP9MIZP4xSqvRx5hFasnWRsoN8wr+e4q7ggI=")
	public, _ := private.PublicKey()
	const vectorTime = 1674087231
	f.Fuzz(func(t *testing.T, id, ts, sigs string, body []byte) {
		header := map[string][]string{"webhook-id": {id}, "webhook-timestamp": {ts}, "webhook-signature": {sigs}}
		err := webhook.Verify(public, header, body, 5*time.Minute, time.Unix(vectorTime, 0))
		if err != nil {
			for _, known := range []error{webhook.ErrMissingHeader, webhook.ErrInvalidHeader, webhook.ErrTimestampTooOld, webhook.ErrTimestampTooNew, webhook.ErrNoMatchingSignature} {
				if errors.Is(err, known) {
					return
				}
			}
			t.Fatalf("Verify: an error of no kind: %v", err)
		}
		sec, perr := strconv.ParseInt(ts, 10, 64)
		if perr != nil || strconv.FormatInt(sec, 10) != ts || sec < vectorTime-300 || sec > vectorTime+300 {
			t.Fatalf("Verify passed with the timestamp %q", ts)
		}
		want := webhook.Sign(id, time.Unix(sec, 0), body, private)
		if !strings.Contains(" "+sigs+" ", " "+want+" ") {
			t.Fatalf("Verify passed signatures %q without Sign's %q", sigs, want)
		}
	})
}
