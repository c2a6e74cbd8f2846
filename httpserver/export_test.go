package httpserver

import (
	"time"

	"golang.org/x/time/rate"
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
