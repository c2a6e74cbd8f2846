package main

import (
	"net/http"
	"testing"
)

// No answer of the server names its software or version: no Server header, on a route,
// an unknown path or a failed authentication.
func TestServeSendsNoServerHeader(t *testing.T) {
	addr, _, stop := serve(t, "-db", tempDB(t), "-addr", "127.0.0.1:0")
	defer stop()
	for _, target := range []string{"/api/platform/users/get/x", "/api/nowhere", "/"} {
		resp, err := http.Get("http://" + addr + target)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if s, ok := resp.Header["Server"]; ok {
			t.Errorf("GET %s: Server: %q, want no Server header", target, s)
		}
	}
}
