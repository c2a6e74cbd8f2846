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

// TestClaimOf: a credential's claim is its kind and the id's canonical text however the
// id is written, none for an id that does not parse; credentials are presented when both
// headers are.
func TestClaimOf(t *testing.T) {
	const id = "0f8fad5b-d9cb-469f-a165-70867728950e"
	for _, tc := range []struct {
		name, secret string
		auth         authKind
		claim        string
		presented    bool
	}{
		{id, "s", platformAPI, "platform " + id, true},
		{strings.ToUpper(id), "s", platformAPI, "platform " + id, true},
		{"0F8fad5b-d9cb-469f-a165-70867728950E", "", platformAPI, "platform " + id, false},
		{"{" + id + "}", "s", userAPI, "key " + id, true},
		{"urn:uuid:" + id, "s", userAPI, "key " + id, true},
		{strings.ReplaceAll(id, "-", ""), "s", userAPI, "key " + id, true},
		{"platform-1", "s", platformAPI, "", true},
		{"", "s", userAPI, "", false},
	} {
		claim, presented := claimOf(tc.auth, tc.name, tc.secret)
		if claim != tc.claim || presented != tc.presented {
			t.Errorf("claimOf(%q, %q) = %q, %v; want %q, %v", tc.name, tc.secret, claim, presented, tc.claim, tc.presented)
		}
	}
}

// TestClientAddr: a connection's address is keyed as addrKey keys what parseAddr reads of
// it, however it is written; IPv4 without a new string.
func TestClientAddr(t *testing.T) {
	for _, remote := range []string{
		"127.0.0.1:54321", "192.0.2.1:1", "255.255.255.255:65535", "0.0.0.0:0",
		"[::1]:8080", "[2001:db8::1]:443", "[2001:db8:0:0:1::1]:443", "[::ffff:192.0.2.1]:80",
		"[fe80::1%eth0]:80", "192.0.2.1", "2001:db8::1", "01.2.3.4:80", "not an address", "",
	} {
		want := remote
		if a, ok := parseAddr(remote); ok {
			want = addrKey(a)
		}
		r := &http.Request{RemoteAddr: remote, Header: http.Header{}}
		if got := clientAddr(r, ""); got != want {
			t.Errorf("clientAddr(%q) = %q, want %q", remote, got, want)
		}
	}
	r := &http.Request{RemoteAddr: "192.0.2.1:1234", Header: http.Header{}}
	if n := testing.AllocsPerRun(100, func() { clientAddr(r, "") }); n != 0 {
		t.Errorf("%v allocations for an IPv4 connection, want none", n)
	}
}
