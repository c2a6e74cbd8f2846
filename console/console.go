// Package console is a browser console for the people who run a payments service: its
// platforms, users, events, webhook endpoints and deliveries, rates, payee rules and
// operations, read through the library's own operations (and package overview's reads),
// with a few actions that call the same library operations the API does.
//
// It is safe by default: every page and action needs a session, which only the console's
// token opens (Login); every action is a POST carrying the session's CSRF token; every
// answer forbids framing, referrers and any script or asset from elsewhere (there is no
// script at all); no page shows a secret or a full account number. It is built from
// html/template and embed, with no external asset, and works without JavaScript.
package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/overview"
)

// Prefix is the path the console is served under.
const Prefix = "/console/"

// sessionCookie names the session's cookie.
const sessionCookie = "payments_console"

// SessionTTL is how long a session lasts after its login.
const SessionTTL = 12 * time.Hour

// maxSessions bounds the sessions kept: past it, a login ends the oldest.
const maxSessions = 1024

//go:embed templates/*.html static/*
var files embed.FS

// Options configures a Console.
type Options struct {
	// Token opens a session (Login). It must not be empty.
	Token string
	// Logger receives a line for each login and each action; nil: discard.
	Logger *slog.Logger
	// Samples, when set, gives the operations page its figures (see Sampler).
	Samples *Sampler
	// Now is the console's clock; nil: time.Now.
	Now func() time.Time
}

// Console is the console's handler. It is safe for concurrent use.
type Console struct {
	svc     *payments.Service
	reader  *overview.Reader
	token   [sha256.Size]byte
	log     *slog.Logger
	now     func() time.Time
	samples *Sampler
	pages   map[string]*template.Template
	mux     *http.ServeMux

	mu       sync.Mutex
	sessions map[string]session

	logins *loginThrottle
}

// session is a logged-in browser's session.
type session struct {
	csrf    string
	expires time.Time
}

// New returns the console over svc. It panics on an empty token: a console nobody
// needs a token for is never what is meant.
func New(svc *payments.Service, opts Options) *Console {
	if opts.Token == "" {
		panic("console: empty token")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &Console{
		svc:      svc,
		reader:   overview.New(svc.Outbox(), svc.DataKeys().Ring),
		token:    sha256.Sum256([]byte(opts.Token)),
		log:      opts.Logger,
		now:      opts.Now,
		samples:  opts.Samples,
		pages:    parsePages(),
		sessions: map[string]session{},
		logins:   newLoginThrottle(),
	}
	c.mux = c.routes()
	return c
}

// NewToken returns a fresh random token (256 bits, base64url), for a server given none.
func NewToken() string { return randomString(32) }

// randomString returns n random bytes in base64url.
func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it panics instead)
	return base64.RawURLEncoding.EncodeToString(b)
}

// securityHeaders are on every answer: no script at all, styles and images from the
// console only, forms posting only to it, never framed, no referrer, no sniffing, no
// caching of pages that show a platform's data.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; " +
		"frame-ancestors 'none'; base-uri 'none'",
	"X-Frame-Options":            "DENY",
	"Referrer-Policy":            "no-referrer",
	"X-Content-Type-Options":     "nosniff",
	"Cache-Control":              "no-store",
	"Cross-Origin-Opener-Policy": "same-origin",
}

// ServeHTTP answers a request under Prefix.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	for k, v := range securityHeaders {
		h.Set(k, v)
	}
	c.mux.ServeHTTP(w, r)
}

// checkToken reports, in constant time, whether token is the console's.
func (c *Console) checkToken(token string) bool {
	sum := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(sum[:], c.token[:]) == 1
}

// login starts a session and returns its id.
func (c *Console) login() string {
	id := randomString(32)
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.sessions) >= maxSessions {
		c.pruneLocked(now)
	}
	for len(c.sessions) >= maxSessions { // all live: end the one expiring first
		oldest, at := "", time.Time{}
		for k, s := range c.sessions {
			if oldest == "" || s.expires.Before(at) {
				oldest, at = k, s.expires
			}
		}
		delete(c.sessions, oldest)
	}
	c.sessions[id] = session{csrf: randomString(32), expires: now.Add(SessionTTL)}
	return id
}

// pruneLocked ends the expired sessions; c.mu is held.
func (c *Console) pruneLocked(now time.Time) {
	for k, s := range c.sessions {
		if !now.Before(s.expires) {
			delete(c.sessions, k)
		}
	}
}

// session returns the request's live session and its id.
func (c *Console) session(r *http.Request) (string, session, bool) {
	ck, err := r.Cookie(sessionCookie)
	if err != nil || ck.Value == "" {
		return "", session{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.sessions[ck.Value]
	if !ok {
		return "", session{}, false
	}
	if !c.now().Before(s.expires) {
		delete(c.sessions, ck.Value)
		return "", session{}, false
	}
	return ck.Value, s, true
}

// logout ends the session id.
func (c *Console) logout(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.sessions, id)
}

// loginThrottle limits token guesses: each client address may try a few logins, then one
// every few seconds; all addresses together, some more. A correct token passes only
// within the same limits, so guessing costs time whatever address it comes from.
type loginThrottle struct {
	mu    sync.Mutex
	perIP map[string]*rate.Limiter
	all   *rate.Limiter
}

// Login limits: per client address, 5 at once then one every 6 seconds; for all
// addresses, 20 at once then 2 a second.
const (
	loginBurst      = 5
	loginEvery      = 6 * time.Second
	loginAllBurst   = 20
	loginAllPerSec  = 2
	maxLoginClients = 4096
)

func newLoginThrottle() *loginThrottle {
	return &loginThrottle{perIP: map[string]*rate.Limiter{}, all: rate.NewLimiter(loginAllPerSec, loginAllBurst)}
}

// allow reports whether the address addr may try a login now.
func (t *loginThrottle) allow(addr string, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	l, ok := t.perIP[addr]
	if !ok {
		if len(t.perIP) >= maxLoginClients {
			clear(t.perIP) // a flood of addresses: start again (the global limit still holds)
		}
		l = rate.NewLimiter(rate.Every(loginEvery), loginBurst)
		t.perIP[addr] = l
	}
	return l.AllowN(now, 1) && t.all.AllowN(now, 1)
}

// clientAddr is the request's remote address without its port.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
