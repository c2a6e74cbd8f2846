package httpserver

import (
	"errors"
	"flag"
	"math"
	"net/http"
	"time"
)

// The limits New applies; NewWithOptions and the serve flags change them.
const (
	// DefaultRateLimit is how many requests a second each platform, and each user-API
	// key, may send on average: none by default. A tenant's quota is the operator's
	// business decision (docs/decisions/limits.md), and a client of the specification, which
	// knows no 429, must not meet one it did not ask for: a server that answers 1,000
	// requests a second to a load test would refuse the rest.
	DefaultRateLimit = 0
	// DefaultAuthFailures is how many authentication failures a minute one client
	// address, and one claimed platform id or API key, may have before 429: more than a
	// test suite checking every 401 of the API sends, so clients of the specification see
	// their 401s, and five guesses a second for credentials of 256 random bits.
	DefaultAuthFailures = 300
	// DefaultTrackedKeys bounds each limiter's table (platforms and keys, addresses,
	// claimed ids, address and id pairs): about 200 bytes an entry.
	DefaultTrackedKeys = 1 << 16
)

// Options adjusts the handler NewWithOptions returns. The zero value is what New uses:
// every limit at its default.
type Options struct {
	// RateLimit is the requests a second each platform, and each API key on the user-API
	// route, may send on average, as a token bucket refilled at this rate. 0 or negative:
	// no limit (the default).
	RateLimit float64
	// RateBurst is the bucket's size: how many requests may come at once. 0 means twice
	// RateLimit (at least 1).
	RateBurst int
	// AuthFailures is how many authentication failures a minute one client address, and
	// one claimed platform id or API key, may have before 429. 0 means
	// DefaultAuthFailures; negative, no throttle.
	AuthFailures int
	// ClientIPHeader, when set, names the header a reverse proxy writes the client's
	// address in (X-Forwarded-For, X-Real-IP): the last address in it is the client's.
	// Empty: the connection's address. Set it only behind a proxy that writes the header,
	// or clients choose their own address.
	ClientIPHeader string
	// TrackedKeys bounds each limiter's table; 0 means DefaultTrackedKeys.
	TrackedKeys int
	// Now is the limiters' clock; nil means time.Now.
	Now func() time.Time
	// Metrics collects the handler's metrics; nil: metrics of the handler's own
	// (NewMetrics).
	Metrics *Metrics
	// MetricsApart leaves GET /metrics off the handler (it answers 404), for a program
	// that serves Metrics.Handler() on a listener of its own.
	MetricsApart bool
	// Console, when set, is served under /console/ (package console), behind the access log
	// like the API; nil: /console/ answers 404 as any unknown path does.
	Console http.Handler
}

// withDefaults returns o with its zero values replaced by the defaults.
func (o Options) withDefaults() Options {
	if o.RateBurst <= 0 && o.RateLimit > 0 {
		o.RateBurst = int(max(1, min(math.Ceil(2*o.RateLimit), math.MaxInt32)))
	}
	if o.AuthFailures == 0 {
		o.AuthFailures = DefaultAuthFailures
	}
	if o.TrackedKeys <= 0 {
		o.TrackedKeys = DefaultTrackedKeys
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// LimitFlags defines the limit flags of paymentsd serve on fs (the scenario command
// restart takes the same): -rate-limit, -rate-burst, -auth-failures and
// -client-ip-header. After fs.Parse, the returned function gives the Options they set,
// or an error for a value that makes no sense. On the command line 0 turns a limit off.
func LimitFlags(fs *flag.FlagSet) func() (Options, error) {
	rateLimit := fs.Float64("rate-limit", DefaultRateLimit,
		"let each platform, and each user-API key, send `R` requests a second on average; 0: no limit (the default)")
	rateBurst := fs.Int("rate-burst", 0,
		"let `B` requests come at once (the token bucket's size); 0: twice -rate-limit")
	authFailures := fs.Int("auth-failures", DefaultAuthFailures,
		"answer 429 after `N` authentication failures a minute from one client address or for one platform id or API key; 0: no throttle")
	ipHeader := fs.String("client-ip-header", "",
		"behind a reverse proxy, read the client's address from the last address in header `NAME` (e.g. X-Forwarded-For); default: the connection's address")
	return func() (Options, error) {
		o := Options{RateLimit: *rateLimit, RateBurst: *rateBurst, AuthFailures: *authFailures, ClientIPHeader: *ipHeader}
		switch {
		case math.IsNaN(o.RateLimit) || math.IsInf(o.RateLimit, 0):
			return Options{}, errors.New("-rate-limit must be a number of requests a second")
		case o.RateBurst < 0:
			return Options{}, errors.New("-rate-burst must not be negative")
		case o.RateBurst > 0 && o.RateLimit <= 0:
			return Options{}, errors.New("-rate-burst needs -rate-limit: without one, no platform has a bucket")
		}
		if o.RateLimit <= 0 {
			o.RateLimit = -1
		}
		if o.AuthFailures <= 0 {
			o.AuthFailures = -1
		}
		return o, nil
	}
}
