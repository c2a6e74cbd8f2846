package egress_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/platform-payments/payments/internal/webhook/egress"
)

// FuzzRetryAfter: whatever a receiver writes in Retry-After, the delay read is never
// negative, is zero for a status that does not take one, and is the seconds written when
// they are a plain number that fits.
func FuzzRetryAfter(f *testing.F) {
	for _, v := range []string{"", "0", "1", "120", " 30 ", "-1", "1.5", "99999999999999999999",
		"Wed, 21 Oct 2015 07:28:00 GMT", "Sun, 06 Nov 1994 08:49:37 GMT", "tomorrow", "\x00"} {
		f.Add(503, v)
		f.Add(200, v)
	}
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, status int, value string) {
		resp := &http.Response{StatusCode: status, Header: http.Header{"Retry-After": {value}}}
		d := egress.RetryAfter(resp, now)
		switch {
		case d < 0:
			t.Fatalf("%d %q: %v, negative", status, value, d)
		case d != 0 && status != 429 && status != 502 && status != 503 && status != 504:
			t.Fatalf("%d %q: %v from a status that takes no Retry-After", status, value, d)
		}
	})
}
