package signing_test

import (
	"testing"
	"time"

	"github.com/platform-payments/payments/signing"
)

// The worked example of docs/api.md (generated there by payments.Sign): known answers.
func TestKnownAnswers(t *testing.T) {
	const (
		secret = "9a41c0de5be5b0c3a7e2f8d61c4b2a9e0f7d3c5b8a1e6f2d4c9b7a0e3f5d8c21"
		target = "/api/platform/users/create"
		body   = `{"name":"Ada Lovelace","email":"ada@example.com"}`
		sum    = "eadf63ebdbdad3871482f095dd81805579a40030132be7177168ffd8c839269e"
	)
	for _, tc := range []struct{ name, got, want string }{
		{"StringToSign", signing.StringToSign("POST", target, []byte(body)), "POST" + target + sum},
		{"Sign", signing.Sign(secret, "POST", target, []byte(body)), "0b76149ffb635df58e62f87c0cd033e4147bea7e2b8120c6df2cc210b06390a5"},
		{"StringToSignTimestamped", signing.StringToSignTimestamped("POST", target, []byte(body), "1795341600"), "POST" + target + sum + "1795341600"},
		{"SignTimestamped", signing.SignTimestamped(secret, "POST", target, []byte(body), "1795341600"), "314ac79888aba838f031d8e2f44205ca11f7f1c3e0e22f71119c72e9656bffd5"},
		// An empty body hashes the empty string.
		{"empty body", signing.StringToSign("GET", "/x?a=1", nil), "GET/x?a=1e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"Timestamp", signing.Timestamp(time.Unix(1795341600, 999e6)), "1795341600"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}
