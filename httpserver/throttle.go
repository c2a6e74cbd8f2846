package httpserver

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

// failureThrottle slows down whoever guesses credentials, without letting anyone who
// knows only a platform id or an API key lock its owner out (docs/decisions/limits.md). Three
// tables count failures, the first two N a minute:
//
//   - by client address: an address over its budget is refused before authentication,
//     whatever it sends, until it has a token again;
//   - by claimed credential (the platform id or API key a request names): once over
//     its budget, every failure naming it answers 429 rather than 401, but a request
//     with the right secret still passes, from any address;
//   - by address and claimed credential, one failure a minute: while the credential is
//     over its budget, an address that has failed for it in the last minute is refused
//     before authentication when it names it again. A guesser spread over many
//     addresses gets one guess a minute from each instead of N, and the owner, which
//     does not fail, is never refused.
//
// A nil *failureThrottle throttles nothing.
type failureThrottle struct {
	addrs, claims, pairs *table
}

// Messages of the 429s: the failure throttle's says as little as the 401 it replaces.
const (
	msgTooManyRequests = "Too many requests."
	msgTooManyFailures = "Too many failed authentication attempts."
)

// pairQuota lets an address fail once a minute for a credential under attack.
var pairQuota = quota{rate: rate.Limit(1.0 / 60), burst: 1}

func newFailureThrottle(n, tracked int) *failureThrottle {
	if n <= 0 {
		return nil
	}
	q := perMinute(n)
	return &failureThrottle{addrs: newTable(q, tracked), claims: newTable(q, tracked), pairs: newTable(pairQuota, tracked)}
}

// admit decides, before authentication, whether a request from addr naming claim ("" for
// none) may be authenticated at all; it returns the 429 when not.
func (f *failureThrottle) admit(addr, claim string, now time.Time) *throttled {
	if f == nil {
		return nil
	}
	if tokens := f.addrs.tokens(addr, now); tokens < 1 {
		return f.addrs.tooMany(msgTooManyFailures, tokens)
	}
	if claim == "" {
		return nil
	}
	tokens := f.claims.tokens(claim, now)
	if tokens >= 1 {
		return nil
	}
	if pair := f.pairs.tokens(addr+" "+claim, now); pair < 1 {
		th := f.claims.tooMany(msgTooManyFailures, tokens)
		// Either the credential's budget or this address's minute, whichever comes first.
		th.retryAfter = min(th.retryAfter, pairQuota.retryAfter(pair))
		return th
	}
	return nil
}

// fail counts a failed authentication from addr naming claim, and returns the 429 to
// answer instead of the 401 when the claimed credential is over its budget.
func (f *failureThrottle) fail(addr, claim string, now time.Time) *throttled {
	if f == nil {
		return nil
	}
	f.addrs.take(addr, now)
	if claim == "" {
		return nil
	}
	f.pairs.take(addr+" "+claim, now)
	if ok, tokens := f.claims.take(claim, now); !ok {
		return f.claims.tooMany(msgTooManyFailures, tokens)
	}
	return nil
}

// clientAddr returns the key of the request's client address: the last address in the
// configured header when it holds one, else the connection's. An IPv6 client is its /64,
// the block one subscriber gets: counting each of its 2^64 addresses apart would count
// nothing.
func clientAddr(r *http.Request, header string) string {
	if header != "" {
		if values := r.Header.Values(header); len(values) > 0 {
			last := values[len(values)-1]
			if i := strings.LastIndexByte(last, ','); i >= 0 {
				last = last[i+1:]
			}
			if a, ok := parseAddr(strings.TrimSpace(last)); ok {
				return addrKey(a)
			}
		}
	}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil && ap.Addr().Is4() {
		// The usual case: an IPv4 connection, whose address is written as its key already
		// (netip takes only the canonical form), so the key costs no new string.
		return r.RemoteAddr[:strings.LastIndexByte(r.RemoteAddr, ':')]
	}
	if a, ok := parseAddr(r.RemoteAddr); ok {
		return addrKey(a)
	}
	return r.RemoteAddr
}

// parseAddr reads an IP address, with or without a port.
func parseAddr(s string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(s); err == nil { // a connection's address: the usual case
		return ap.Addr(), true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return a, true
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		if a, err := netip.ParseAddr(host); err == nil {
			return a, true
		}
	}
	return netip.Addr{}, false
}

func addrKey(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}
