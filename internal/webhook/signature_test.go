package webhook_test

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/platform-payments/payments/internal/webhook"
)

// The example of the Standard Webhooks reference libraries' tests (a 24-byte secret).
// The expected signature was derived again, independently, with
//
//	printf '%s' 'msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{"test": 2432232314}' |
//	  openssl dgst -sha256 -mac HMAC -macopt hexkey:$(printf MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw | base64 -d | xxd -p -c 64) -binary | base64
const (
	specSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	specID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	specTimestamp = 1614265330
	specBody      = `{"test": 2432232314}`
	specSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

var specTime = time.Unix(specTimestamp, 0)

func mustParse(tb testing.TB, text string) webhook.Secret {
	tb.Helper()
	s, err := webhook.ParseSecret(text)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func specHeader() map[string][]string {
	return map[string][]string{
		"webhook-id":        {specID},
		"webhook-timestamp": {strconv.Itoa(specTimestamp)},
		"webhook-signature": {specSignature},
	}
}

func TestSign(t *testing.T) {
	secret := mustParse(t, specSecret)
	t.Run("SpecExample", func(t *testing.T) {
		if got := webhook.Sign(specID, specTime, []byte(specBody), secret); got != specSignature {
			t.Fatalf("Sign = %q, want %q", got, specSignature)
		}
	})
	t.Run("Rotation", func(t *testing.T) {
		other := webhook.NewSecret()
		got := webhook.Sign(specID, specTime, []byte(specBody), other, secret)
		first, second, ok := strings.Cut(got, " ")
		if !ok || second != specSignature || first != webhook.Sign(specID, specTime, []byte(specBody), other) {
			t.Fatalf("Sign with two secrets = %q, want the new one's, a space, then %q", got, specSignature)
		}
	})
	t.Run("Headers", func(t *testing.T) {
		h := webhook.Headers(specID, specTime, []byte(specBody), secret)
		want := http.Header{
			"Webhook-Id":        {specID},
			"Webhook-Timestamp": {"1614265330"},
			"Webhook-Signature": {specSignature},
		}
		if fmt.Sprint(h) != fmt.Sprint(want) {
			t.Fatalf("Headers = %v, want %v", h, want)
		}
	})
	t.Run("ZeroSecretPanics", func(t *testing.T) {
		for name, secrets := range map[string][]webhook.Secret{"none": nil, "zero": {{}}, "a zero second": {secret, {}}} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("Sign with %s did not panic", name)
					}
				}()
				webhook.Sign(specID, specTime, nil, secrets...)
			}()
		}
	})
}

func TestVerify(t *testing.T) {
	secret := mustParse(t, specSecret)
	body := []byte(specBody)
	ok := func(t *testing.T, header map[string][]string, now time.Time) {
		t.Helper()
		if err := webhook.Verify(secret, header, body, 5*time.Minute, now); err != nil {
			t.Fatalf("Verify: %v", err)
		}
	}
	fails := func(t *testing.T, header map[string][]string, body []byte, now time.Time, want error) {
		t.Helper()
		err := webhook.Verify(secret, header, body, 5*time.Minute, now)
		if !errors.Is(err, want) {
			t.Fatalf("Verify = %v, want %v", err, want)
		}
		if strings.Contains(err.Error(), specSecret[len("whsec_"):]) {
			t.Fatalf("Verify's error %q shows the secret", err)
		}
	}

	t.Run("SpecExample", func(t *testing.T) { ok(t, specHeader(), specTime) })
	t.Run("HTTPHeader", func(t *testing.T) {
		h := http.Header{}
		for k, v := range specHeader() {
			h.Set(k, v[0])
		}
		ok(t, h, specTime)
	})
	t.Run("MixedCase", func(t *testing.T) {
		ok(t, map[string][]string{
			"WEBHOOK-ID":        {specID},
			"Webhook-Timestamp": {"1614265330"},
			"webhook-Signature": {specSignature},
		}, specTime)
	})
	t.Run("OneOfSeveral", func(t *testing.T) {
		h := specHeader()
		other := webhook.Sign(specID, specTime, body, webhook.NewSecret())
		h["webhook-signature"] = []string{"v1a,bm90IGEgc2lnbmF0dXJl " + other + "  v2,xyz " + specSignature + " "}
		ok(t, h, specTime)
	})
	t.Run("ToleranceEdges", func(t *testing.T) {
		ok(t, specHeader(), specTime.Add(5*time.Minute))
		ok(t, specHeader(), specTime.Add(-5*time.Minute))
		fails(t, specHeader(), body, specTime.Add(5*time.Minute+time.Second), webhook.ErrTimestampTooOld)
		fails(t, specHeader(), body, specTime.Add(-5*time.Minute-time.Second), webhook.ErrTimestampTooNew)
	})
	t.Run("DefaultTolerance", func(t *testing.T) {
		for _, tolerance := range []time.Duration{0, -time.Hour} {
			if err := webhook.Verify(secret, specHeader(), body, tolerance, specTime.Add(webhook.DefaultTolerance)); err != nil {
				t.Fatalf("Verify with tolerance %v: %v", tolerance, err)
			}
			err := webhook.Verify(secret, specHeader(), body, tolerance, specTime.Add(webhook.DefaultTolerance+time.Second))
			if !errors.Is(err, webhook.ErrTimestampTooOld) {
				t.Fatalf("Verify with tolerance %v past the default: %v", tolerance, err)
			}
		}
	})
	for _, name := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
		t.Run("ErrMissingHeader/"+name, func(t *testing.T) {
			h := specHeader()
			delete(h, name)
			fails(t, h, body, specTime, webhook.ErrMissingHeader)
			h[name] = []string{""}
			fails(t, h, body, specTime, webhook.ErrMissingHeader)
			h[name] = nil
			fails(t, h, body, specTime, webhook.ErrMissingHeader)
		})
		t.Run("ErrInvalidHeader/twice/"+name, func(t *testing.T) {
			h := specHeader()
			h[http.CanonicalHeaderKey(name)] = h[name]
			fails(t, h, body, specTime, webhook.ErrInvalidHeader)
			h = specHeader()
			h[name] = append(h[name], h[name][0])
			fails(t, h, body, specTime, webhook.ErrInvalidHeader)
		})
	}
	t.Run("ErrInvalidHeader/timestamp", func(t *testing.T) {
		for _, ts := range []string{"+1614265330", "01614265330", "1614265330.0", " 1614265330", "1614265330000000000000", "now"} {
			h := specHeader()
			h["webhook-timestamp"] = []string{ts}
			fails(t, h, body, specTime, webhook.ErrInvalidHeader)
		}
	})
	t.Run("ErrTimestampFarOff", func(t *testing.T) {
		for ts, want := range map[string]error{
			"9223372036854775807":  webhook.ErrTimestampTooNew,
			"-9223372036854775808": webhook.ErrTimestampTooOld,
			"0":                    webhook.ErrTimestampTooOld,
		} {
			h := specHeader()
			h["webhook-timestamp"] = []string{ts}
			fails(t, h, body, specTime, want)
		}
	})
	t.Run("ErrNoMatchingSignature", func(t *testing.T) {
		fails(t, specHeader(), []byte(`{"test": 2432232315}`), specTime, webhook.ErrNoMatchingSignature)
		h := specHeader()
		h["webhook-id"] = []string{"msg_other"}
		fails(t, h, body, specTime, webhook.ErrNoMatchingSignature)
		for _, sig := range []string{
			"v1a," + specSignature[3:],                                // another version
			"v2," + specSignature[3:],                                 // another version
			specSignature[3:],                                         // no version
			"v1," + strings.TrimSuffix(specSignature[3:], "="),        // unpadded
			"V1," + specSignature[3:],                                 // the version in another case
			"v1," + strings.ToLower(specSignature[3:]),                // another text
			webhook.Sign(specID, specTime, body, webhook.NewSecret()), // another secret
		} {
			h := specHeader()
			h["webhook-signature"] = []string{sig}
			fails(t, h, body, specTime, webhook.ErrNoMatchingSignature)
		}
		if err := webhook.Verify(webhook.Secret{}, specHeader(), body, time.Minute, specTime); !errors.Is(err, webhook.ErrNoMatchingSignature) {
			t.Fatalf("Verify under the zero Secret = %v", err)
		}
	})
}

func TestSecret(t *testing.T) {
	t.Run("NewSecret", func(t *testing.T) {
		a, b := webhook.NewSecret(), webhook.NewSecret()
		if a.Text() == b.Text() {
			t.Fatal("two new secrets are equal")
		}
		text := a.Text()
		if !strings.HasPrefix(text, "whsec_") || len(text) != len("whsec_")+44 {
			t.Fatalf("Text = %q, want whsec_ and the base64 of 32 bytes", text)
		}
		again := mustParse(t, text)
		if again.Text() != text {
			t.Fatalf("ParseSecret(Text()).Text() = %q, want %q", again.Text(), text)
		}
	})
	t.Run("Printing", func(t *testing.T) {
		s := mustParse(t, specSecret)
		for _, format := range []string{"%v", "%+v", "%#v", "%s", "%x", "%q", "%d"} {
			for _, v := range []any{s, struct{ S webhook.Secret }{s}, &s} {
				if got := fmt.Sprintf(format, v); strings.Contains(got, "MfKQ") || strings.Contains(got, "31f290") {
					t.Errorf("Sprintf(%q) = %q shows the secret", format, got)
				}
			}
		}
	})
	t.Run("ParseSecret", func(t *testing.T) {
		ok := map[string]string{
			"spec (24 bytes)": specSecret,
			"64 bytes":        "whsec_" + strings.Repeat("AAAA", 21) + "AA==",
			"white space":     "  " + specSecret + "\n",
		}
		for name, text := range ok {
			if _, err := webhook.ParseSecret(text); err != nil {
				t.Errorf("%s: ParseSecret: %v", name, err)
			}
		}
		bad := map[string]string{
			"empty":        "",
			"no prefix":    "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
			"other prefix": "whxx_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
			"whsk_ 24 B":   "whsk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
			"whpk_ 24 B":   "whpk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
			"whpk_ 64 B":   "whpk_" + strings.Repeat("A", 88),
			"prefix case":  "WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
			"prefix only":  "whsec_",
			"not base64":   "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa!w",
			"url base64":   "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa-_",
			"unpadded":     "whsec_" + strings.Repeat("A", 43),
			"stray bits":   "whsec_" + strings.Repeat("A", 42) + "B=",
			"line break":   "whsec_MfKQ9r8GKYqrTwjU\nPD8ILPZIo2LaLaSw",
			"23 bytes":     "whsec_" + strings.Repeat("A", 31) + "=",
			"65 bytes":     "whsec_" + strings.Repeat("A", 88),
			"inner space":  "whsec_MfKQ9r8GKYqrTwjU PD8ILPZIo2LaLaSw",
		}
		for name, text := range bad {
			_, err := webhook.ParseSecret(text)
			if !errors.Is(err, webhook.ErrInvalidSecret) {
				t.Errorf("%s: ParseSecret = %v, want ErrInvalidSecret", name, err)
				continue
			}
			body := strings.TrimSpace(text)
			for _, p := range []string{"whsec_", "whsk_", "whpk_"} {
				body = strings.TrimPrefix(body, p)
			}
			if len(body) > 3 && strings.Contains(err.Error(), body[:4]) {
				t.Errorf("%s: ParseSecret's error %q shows the text", name, err)
			}
		}
	})
}
