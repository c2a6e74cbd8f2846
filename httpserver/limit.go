package httpserver

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// quota is a token bucket's shape: refilled at rate tokens a second, holding at most burst.
type quota struct {
	rate  rate.Limit
	burst int
}

// perMinute is the quota of n events a minute, n at once.
func perMinute(n int) quota { return quota{rate: rate.Limit(float64(n) / 60), burst: n} }

// seconds rounds a duration in seconds up to whole seconds; a billionth of a second of
// floating-point noise does not make one more.
func seconds(s float64) int {
	if s <= 1e-9 {
		return 0
	}
	return int(min(math.Ceil(s-1e-9), math.MaxInt32))
}

// remaining is what the RateLimit-Remaining header says for a bucket holding tokens.
func (q quota) remaining(tokens float64) int { return int(max(0, math.Floor(tokens))) }

// reset is the seconds until a bucket holding tokens is full again: what the
// RateLimit-Reset header says.
func (q quota) reset(tokens float64) int {
	return seconds((float64(q.burst) - tokens) / float64(q.rate))
}

// retryAfter is the seconds until a bucket holding tokens has one: what Retry-After says
// (at least 1, so that no client is told to retry at once).
func (q quota) retryAfter(tokens float64) int { return max(1, seconds((1-tokens)/float64(q.rate))) }

// setHeaders writes the RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset headers
// (draft-ietf-httpapi-ratelimit-headers) of a bucket holding tokens: the bucket holds
// Limit requests when full, Remaining now, and is full again in Reset seconds.
func (q quota) setHeaders(h http.Header, tokens float64) {
	h.Set("RateLimit-Limit", strconv.Itoa(q.burst))
	h.Set("RateLimit-Remaining", strconv.Itoa(q.remaining(tokens)))
	h.Set("RateLimit-Reset", strconv.Itoa(q.reset(tokens)))
}

// tooMany is the 429 for a bucket that holds less than a token.
func (q quota) tooMany(message string, tokens float64) *throttled {
	return &throttled{message: message, quota: q, tokens: tokens, retryAfter: q.retryAfter(tokens)}
}

// table holds one token bucket (a rate.Limiter) for each key: a platform, an API key, a
// client address. A key never seen has a full bucket, and so has a key whose bucket
// filled up again: such buckets are forgotten first when the table is full, which
// changes no answer. The table never holds more than max buckets.
type table struct {
	quota
	max int

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

func newTable(q quota, max int) *table {
	return &table{quota: q, max: max, buckets: make(map[string]*rate.Limiter)}
}

// tokens returns what key's bucket holds at now, without creating it.
func (t *table) tokens(key string, now time.Time) float64 {
	t.mu.Lock()
	b, ok := t.buckets[key]
	t.mu.Unlock()
	if !ok {
		return float64(t.burst)
	}
	return b.TokensAt(now)
}

// take takes a token from key's bucket when it holds one, and reports whether it did
// and what the bucket holds after.
func (t *table) take(key string, now time.Time) (bool, float64) {
	t.mu.Lock()
	b, ok := t.buckets[key]
	if !ok {
		if len(t.buckets) >= t.max {
			t.sweep(now)
		}
		b = rate.NewLimiter(t.rate, t.burst)
		t.buckets[key] = b
	}
	t.mu.Unlock()
	took := b.AllowN(now, 1)
	return took, b.TokensAt(now)
}

// sweep makes room for an eighth of the table: it forgets the full buckets, then, when
// that was not enough (more keys than max are spending tokens at once), buckets in the
// map's unspecified order. Forgetting a bucket that is not full hands its key a full
// one: under such a flood some keys get their burst again, but memory stays bounded,
// and each sweep's cost is shared by the eighth of the table's inserts that follow it.
func (t *table) sweep(now time.Time) {
	full := float64(t.burst)
	for key, b := range t.buckets {
		if b.TokensAt(now) >= full {
			delete(t.buckets, key)
		}
	}
	target := t.max - max(1, t.max/8)
	for key := range t.buckets {
		if len(t.buckets) <= target {
			break
		}
		delete(t.buckets, key)
	}
}

// size returns how many buckets the table holds.
func (t *table) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.buckets)
}
