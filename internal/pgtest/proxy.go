package pgtest

import (
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to a server, so that a test can take the server away
// and bring it back: Down closes every connection and refuses new ones, as a server that
// stops does; Stall keeps every connection open but passes nothing either way, and
// accepts new ones that nothing answers, as when the server's host is gone without a
// word; Up listens again on the same address (and ends a stall).
type Proxy struct {
	addr, target string
	mu           sync.Mutex
	l            net.Listener
	conns        map[net.Conn]bool
	stalled      bool
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
			p.mu.Lock()
			stalled := p.stalled
			p.conns[c] = true
			p.mu.Unlock()
			if stalled {
				continue // held open, unanswered, until Down
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[s] = true
			p.mu.Unlock()
			go func() { p.copy(s, c); _ = s.Close() }()
			go func() { p.copy(c, s); _ = c.Close() }()
		}
	}()
}

// copy passes what src sends to dst, dropping it while the proxy is stalled.
func (p *Proxy) copy(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			stalled := p.stalled
			p.mu.Unlock()
			if !stalled {
				if _, err := dst.Write(buf[:n]); err != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// Stall passes nothing more either way on any connection, and holds new ones open
// unanswered, until Up (after Down) or Resume.
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = true
}

// Resume ends a stall: the connections held through it stay broken (what was sent was
// dropped), new ones reach the server again.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = false
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
	p.stalled = false
	p.serve(l)
	p.mu.Unlock()
}
