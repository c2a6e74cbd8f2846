// Package egress is the HTTP side of webhook deliveries: the client that sends them
// through the guarded dialer of package webhook, the capped reading of what receivers
// answer, and Post, one delivery attempt and what it came to. It is apart from package webhook so that what receivers and the service need of
// webhooks (secrets, signatures, URL rules) does not bring in net/http.
package egress

import (
	"io"
	"net"
	"net/http"
	"time"
)

// NewClient returns the HTTP client of deliveries: it connects through dialer only (no
// proxy from the environment), never follows a redirect (the 3xx response is returned as
// it is: a delivery answered so has failed), asks for no compression (a body is read as
// sent, and only as far as ReadBody reads), and gives up on a request after timeout,
// the reading of its response included.
func NewClient(dialer *net.Dialer, timeout time.Duration) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:              nil,
			DialContext:        dialer.DialContext,
			ForceAttemptHTTP2:  true,
			DisableCompression: true,
			// A busy endpoint keeps a connection for each worker sending to it: one
			// dialled for every delivery costs more than the delivery.
			MaxIdleConns:           512,
			MaxIdleConnsPerHost:    64,
			IdleConnTimeout:        90 * time.Second,
			TLSHandshakeTimeout:    10 * time.Second,
			ResponseHeaderTimeout:  timeout,
			MaxResponseHeaderBytes: 64 << 10,
		},
		Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// DrainLimit is how much of a response body past what ReadBody keeps it reads and
// discards, so that the connection can serve the next delivery; a longer body closes it.
const DrainLimit = 64 << 10

// ReadBody reads at most keep bytes of body and returns them (the attempt log keeps the
// first 1 KiB), discards at most DrainLimit bytes more, and closes body. Its error is that
// of reading the kept bytes only.
func ReadBody(body io.ReadCloser, keep int) ([]byte, error) {
	defer body.Close()
	kept, err := io.ReadAll(io.LimitReader(body, int64(max(keep, 0))))
	if err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(body, DrainLimit))
	}
	return kept, err
}
