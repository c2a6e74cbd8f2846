package egress

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/platform-payments/payments/internal/webhook"
)

// ResponseKeep is how much of a receiver's answer an Attempt keeps, in bytes.
const ResponseKeep = 1024

// Attempt is what one delivery attempt came to, as the attempt log records it.
type Attempt struct {
	// StatusCode is the receiver's status; 0 when there was no answer.
	StatusCode int
	// Error says why the attempt failed without an answer or was not a success, in a few
	// words ("status 500", "connection refused", "timed out after 15s"); "" on success.
	// It never holds the headers or the body sent, nor the URL, which may hold a
	// credential (at most the piece of a URL that does not parse).
	Error string
	// Latency runs from sending the request to the end of reading the kept part of the
	// answer, or to the failure.
	Latency time.Duration
	// Response is the first ResponseKeep bytes of the answer's body.
	Response []byte
	// RetryAfter is the answer's Retry-After, in delta-seconds or an HTTP-date (read
	// against the now given to Post), on a 429, 502, 503 or 504; 0 on any other status,
	// without the header, when it does not parse, or when it is in the past.
	RetryAfter time.Duration
}

// Succeeded reports whether the receiver answered with a 2xx status.
func (a Attempt) Succeeded() bool { return a.StatusCode >= 200 && a.StatusCode <= 299 }

// Gone reports whether the receiver answered 410 Gone: the endpoint asks to be disabled.
func (a Attempt) Gone() bool { return a.StatusCode == http.StatusGone }

// Post sends one delivery: a POST of body to url with header (webhook.Headers', and what
// the caller adds such as Content-Type and User-Agent), under ctx, through client (from
// NewClient). It reads at most ResponseKeep bytes of the answer, and DrainLimit more to
// reuse the connection. now is the clock an HTTP-date Retry-After is read against (nil:
// time.Now); Latency is measured on the monotonic clock.
//
// It never returns an error: every failure, before or after an answer, is an Attempt with
// Error set. A 2xx answer whose body cannot be read is still a success.
func Post(ctx context.Context, client *http.Client, url string, header map[string][]string, body []byte, now func() time.Time) Attempt {
	if now == nil {
		now = time.Now
	}
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Attempt{Error: "invalid request: " + describe(err)}
	}
	req.Header = http.Header(header).Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	limit := timeLimit(ctx, client, start)

	resp, err := client.Do(req)
	if err != nil {
		elapsed := time.Since(start)
		return Attempt{Error: describeFailure(err, elapsed, limit), Latency: elapsed}
	}
	a := Attempt{StatusCode: resp.StatusCode}
	a.RetryAfter = retryAfter(resp, now())
	kept, err := io.ReadAll(io.LimitReader(resp.Body, ResponseKeep))
	a.Latency = time.Since(start)
	a.Response = kept
	if err == nil {
		_, _ = ReadBody(resp.Body, 0) // drains what may be drained, and closes
	} else {
		_ = resp.Body.Close()
	}

	switch code := resp.StatusCode; {
	case a.Succeeded():
	case code >= 300 && code <= 399:
		a.Error = "redirect not followed (status " + strconv.Itoa(code) + ")"
	default:
		a.Error = "status " + strconv.Itoa(code)
	}
	if a.Error != "" && err != nil {
		a.Error += "; reading the answer: " + describeFailure(err, a.Latency, limit)
	}
	return a
}

// timeLimit returns the time the request has from start: the shorter of the client's
// timeout and what is left of ctx's deadline, or 0 when there is neither.
func timeLimit(ctx context.Context, client *http.Client, start time.Time) time.Duration {
	limit := client.Timeout
	if deadline, ok := ctx.Deadline(); ok {
		if left := deadline.Sub(start); limit <= 0 || left < limit {
			limit = max(left, 0)
		}
	}
	return limit
}

// retryAfter returns the Retry-After of a 429, 502, 503 or 504 from now, and 0 otherwise.
func retryAfter(resp *http.Response, now time.Time) time.Duration {
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
	default:
		return 0
	}
	value := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if value == "" {
		return 0
	}
	if value[0] >= '0' && value[0] <= '9' { // delta-seconds: 1*DIGIT
		n, err := strconv.ParseUint(value, 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange), err == nil && n > uint64(maxDuration/time.Second):
			return maxDuration
		case err != nil:
			return 0
		}
		return time.Duration(n) * time.Second // #nosec G115 -- n ≤ maxDuration/time.Second, checked above
	}
	t, err := http.ParseTime(value)
	if err != nil {
		return 0
	}
	return max(t.Sub(now), 0)
}

// maxDuration is the longest time.Duration.
const maxDuration = time.Duration(1<<63 - 1)

// describeFailure says in a few words why a request got no answer, or why reading the
// answer failed, after elapsed of the limit the request had (0: none known).
func describeFailure(err error, elapsed, limit time.Duration) string {
	var refused *webhook.AddressError
	var netErr net.Error
	switch {
	case errors.As(err, &refused):
		return refused.Error() // which address, and why it is refused
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout():
		if limit > 0 && elapsed >= limit {
			return "timed out after " + limit.Round(time.Millisecond).String()
		}
		// Some other limit, such as the dialer's: how long it took is what is known.
		return "timed out after " + elapsed.Round(time.Millisecond).String()
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed before a complete answer"
	}
	return describe(err)
}

// describe returns err's message without the URL that the *url.Error of net/http (and of
// net/url's parsing) carries: the URL may hold a credential, and the attempt log has it.
func describe(err error) string {
	var u *url.Error
	for errors.As(err, &u) {
		err = u.Err
	}
	if err == nil {
		return "failed"
	}
	return err.Error()
}
