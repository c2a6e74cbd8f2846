package cache

import "testing"

func TestBoundedCache(t *testing.T) {
	c := New[int, string](3)
	for i := range 10 {
		c.Put(i, "v")
		if len(c.m) > 3 {
			t.Fatalf("after %d puts: %d entries, want at most 3", i+1, len(c.m))
		}
		if v, ok := c.Get(i); !ok || v != "v" {
			t.Fatalf("get(%d) = %q, %v right after put", i, v, ok)
		}
	}
	// Replacing an entry of a full cache evicts nothing.
	full := map[int]bool{}
	for k := range c.m {
		full[k] = true
	}
	for k := range full {
		c.Put(k, "w")
	}
	for k := range full {
		if v, ok := c.Get(k); !ok || v != "w" {
			t.Errorf("get(%d) = %q, %v after replacing", k, v, ok)
		}
	}
	if _, ok := c.Get(-1); ok {
		t.Error("get of a key never put found something")
	}
}
