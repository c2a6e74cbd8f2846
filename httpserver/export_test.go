package httpserver

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"golang.org/x/time/rate"

	"github.com/platform-payments/payments"
)

// Table is the limiters' table, for the external tests of its bound.
type Table = table

// NewTable returns a table of buckets of burst tokens refilled at perSecond, holding at
// most max of them.
func NewTable(perSecond float64, burst, max int) *Table {
	return newTable(quota{rate: rate.Limit(perSecond), burst: burst}, max)
}

func (t *table) Take(key string, now time.Time) (bool, float64) { return t.take(key, now) }

func (t *table) Tokens(key string, now time.Time) float64 { return t.tokens(key, now) }

func (t *table) Size() int { return t.size() }

// NewWithRoute returns the handler NewWithOptions returns, with one more route: a platform
// route without a body at pattern, answering what h returns as the operation's response
// body (or error). It is for the tests of what the server does around any handler: a
// panic, a response that does not encode.
func NewWithRoute(svc *payments.Service, logger *slog.Logger, opts Options, pattern string, h func() (any, error)) http.Handler {
	extra := route{pattern, platformAPI, noBody, reads, func(*server, context.Context, *call) (any, error) { return h() }}
	return newServer(svc, logger, opts).handler(append(slices.Clone(routes), extra))
}
