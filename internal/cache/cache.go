// Package cache is the bounded cache the service keeps what never changes in: platforms,
// API-key credentials and users as Get User shows them.
package cache

import "sync"

// Bounded keeps at most max entries of what never changes once written (platforms
// and API-key credentials are never modified or deleted). When full, an arbitrary entry
// makes room: reading it again costs one store lookup, and the memory a flood of distinct
// keys can take is bounded.
type Bounded[K comparable, V any] struct {
	mu  sync.RWMutex
	m   map[K]V
	max int
}

// New returns an empty cache of at most max entries.
func New[K comparable, V any](max int) *Bounded[K, V] {
	return &Bounded[K, V]{m: make(map[K]V), max: max}
}

// Get returns the entry of k, if any.
func (c *Bounded[K, V]) Get(k K) (V, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.m[k]
	return v, ok
}

// Put sets the entry of k, making room first when the cache is full.
func (c *Bounded[K, V]) Put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, present := c.m[k]; !present && len(c.m) >= c.max {
		for old := range c.m { // map order is unspecified: any entry will do
			delete(c.m, old)
			break
		}
	}
	c.m[k] = v
}

// Len returns the number of entries.
func (c *Bounded[K, V]) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}
