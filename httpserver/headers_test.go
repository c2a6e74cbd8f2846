package httpserver

import (
	"bufio"
	"net/http"
	"strings"
	"testing"

	"github.com/platform-payments/payments"
)

// TestHeaderValue: the headers read by their canonical names give what Header.Get gives
// for the names as written, however a client spells them, and the first of repeated ones.
func TestHeaderValue(t *testing.T) {
	canonical := map[string]string{
		payments.HeaderPlatformID: headerPlatformID,
		payments.HeaderSignature:  headerSignature,
		payments.HeaderTimestamp:  headerTimestamp,
		payments.HeaderAPIKey:     headerAPIKey,
		payments.HeaderAPISecret:  headerAPISecret,
		"X-Request-ID":            headerRequestID,
	}
	for _, tc := range []struct {
		name, sent string
	}{
		{"AsWritten", "X-Platform-ID: p\r\nX-Signature: s\r\nX-Timestamp: 1\r\nX-Api-Key: k\r\nX-Api-Secret: a\r\nX-Request-ID: r\r\n"},
		{"LowerCase", "x-platform-id: p\r\nx-signature: s\r\nx-timestamp: 1\r\nx-api-key: k\r\nx-api-secret: a\r\nx-request-id: r\r\n"},
		{"Repeated", "X-PLATFORM-ID: first\r\nx-platform-id: second\r\nX-Request-Id: one\r\nX-REQUEST-ID: two\r\n"},
		{"Empty", "X-Signature: \r\n"},
		{"Absent", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := http.ReadRequest(bufio.NewReader(strings.NewReader("GET / HTTP/1.1\r\nHost: x\r\n" + tc.sent + "\r\n")))
			if err != nil {
				t.Fatal(err)
			}
			for written, name := range canonical {
				if got, want := headerValue(r.Header, name), r.Header.Get(written); got != want {
					t.Errorf("headerValue(%s) = %q, Header.Get(%s) = %q", name, got, written, want)
				}
			}
		})
	}
}
