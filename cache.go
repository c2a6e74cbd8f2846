package payments

import "sync"

// boundedCache keeps at most max entries of what never changes once written (platforms
// and API-key credentials are never modified or deleted). When full, an arbitrary entry
// makes room: reading it again costs one store lookup, and the memory a flood of distinct
// keys can take is bounded.
type boundedCache[K comparable, V any] struct {
	mu  sync.RWMutex
	m   map[K]V
	max int
}

func newBoundedCache[K comparable, V any](max int) *boundedCache[K, V] {
	return &boundedCache[K, V]{m: make(map[K]V), max: max}
}

func (c *boundedCache[K, V]) get(k K) (V, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *boundedCache[K, V]) put(k K, v V) {
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
