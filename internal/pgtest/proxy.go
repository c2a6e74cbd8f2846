package pgtest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to a server, so that a test can take the server away
// and bring it back: Down closes every connection and refuses new ones, as a server that
// stops does; Up listens again on the same address.
type Proxy struct {
	addr, target string
	mu           sync.Mutex
	l            net.Listener
	conns        map[net.Conn]bool
	wg           sync.WaitGroup
}

// BehindProxy returns a proxy in front of the server of dsn (a postgres:// URL) and dsn
// with its host:port replaced by the proxy's; the test is skipped when dsn names no
// host:port. The proxy goes down when the test ends.
func BehindProxy(tb testing.TB, dsn string) (*Proxy, string) {
	tb.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	if u.Host == "" {
		tb.Skip("the PostgreSQL DSN names no host:port to put a proxy before")
	}
	p := &Proxy{target: u.Host, conns: map[net.Conn]bool{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p.addr = l.Addr().String()
	p.serve(l)
	tb.Cleanup(p.Down)
	u.Host = p.addr
	return p, u.String()
}

func (p *Proxy) serve(l net.Listener) {
	p.l = l
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[c], p.conns[s] = true, true
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); _ = s.Close() }()
			go func() { _, _ = io.Copy(c, s); _ = c.Close() }()
		}
	}()
}

// Down closes every connection and stops listening. Safe to call again.
func (p *Proxy) Down() {
	p.mu.Lock()
	if p.l != nil {
		_ = p.l.Close()
		p.l = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
	p.mu.Unlock()
	p.wg.Wait()
}

// Up listens again on the proxy's address.
func (p *Proxy) Up(tb testing.TB) {
	tb.Helper()
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		tb.Fatal(err)
	}
	p.mu.Lock()
	p.serve(l)
	p.mu.Unlock()
}
