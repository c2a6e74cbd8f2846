// Package httpserver serves the payments library over HTTP: the fourteen routes of the
// Platform Payments API and fourteen of webhooks and events, each answering in the contract's
// JSON envelopes.
package httpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/time/rate"

	"github.com/platform-payments/payments"
)

// MaxBodyBytes is the largest request body accepted (413 beyond).
const MaxBodyBytes = 64 << 10

// largeBodyBytes is where a body stops being ordinary. The largest request a client of the
// specification sends is about 1 KiB; a body of tens of KiB can cost milliseconds and
// megabytes to decode and to answer (a 422 with an entry for each of thousands of unknown
// fields), so large bodies are validated and answered a few at a time, on all cores but
// one: a flood of them waits for its turn instead of taking the memory and the cores from
// everyone else.
const largeBodyBytes = 4 << 10

// New returns the API's handler over svc, logging each request to logger (nil: discard),
// with the default limits (Options).
func New(svc *payments.Service, logger *slog.Logger) http.Handler {
	return NewWithOptions(svc, logger, Options{})
}

// NewWithOptions returns the API's handler over svc, logging each request to logger
// (nil: discard), with the limits of opts.
func NewWithOptions(svc *payments.Service, logger *slog.Logger, opts Options) http.Handler {
	return newServer(svc, logger, opts).handler(routes)
}

// newServer returns the server behind NewWithOptions, before its routes are mounted.
func newServer(svc *payments.Service, logger *slog.Logger, opts Options) *server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	opts = opts.withDefaults()
	s := &server{
		svc:         svc,
		log:         logger,
		largeBodies: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)-1)),
		now:         opts.Now,
		ipHeader:    opts.ClientIPHeader,
		failures:    newFailureThrottle(opts.AuthFailures, opts.TrackedKeys),
		metrics:     opts.Metrics,
		metricsOff:  opts.MetricsApart,
		console:     opts.Console,
	}
	if s.metrics == nil {
		s.metrics = NewMetrics(svc)
	}
	if opts.RateLimit > 0 {
		s.rates = newTable(quota{rate: rate.Limit(opts.RateLimit), burst: opts.RateBurst}, opts.TrackedKeys)
	}
	return s
}

// handler mounts routes on a mux of their own and returns it behind the access log (request
// ids, panic recovery) and the mux's answers in JSON.
func (s *server) handler(routes []route) http.Handler {
	mux := http.NewServeMux()
	for _, rt := range routes {
		s.route(mux, rt)
	}
	s.mountOps(mux)
	if s.console != nil {
		mux.Handle("/console/", ours(s.console.ServeHTTP))
	}
	return s.accessLog(jsonMux{mux: mux, now: s.svc.Now})
}

type server struct {
	svc *payments.Service
	log *slog.Logger
	// largeBodies holds a token for each request with a large body being validated and
	// answered: one per core but one, which stays free for everyone else.
	largeBodies chan struct{}

	now      func() time.Time // the limiters' clock
	ipHeader string           // Options.ClientIPHeader
	rates    *table           // a bucket per platform and per API key; nil: no limit
	failures *failureThrottle // nil: failures are not throttled

	metrics    *Metrics
	metricsOff bool // Options.MetricsApart: /metrics is served elsewhere

	console http.Handler // Options.Console: served under /console/
}

type authKind int

const (
	platformAPI authKind = iota // X-Platform-ID and X-Signature (and X-Timestamp)
	userAPI                     // X-Api-Key and X-Api-Secret
)

type bodyKind bool

const (
	withBody bodyKind = true  // carries a JSON body: media type checked, body validated
	noBody   bodyKind = false // any body is only part of the signature
)

// call is an authenticated request on its way to an operation.
type call struct {
	platform uuid.UUID       // platform routes: the calling platform
	caller   payments.Caller // user-API route: the key's user
	// req is the request's query and body; its path parameters are read from r, by the
	// handler (path) or into req when the library validates the request (request).
	req    payments.Request
	r      *http.Request
	params []string // the route's path parameters
	// idem is the request's Idempotency-Key on a route that changes something (nil: none):
	// the handler passes it to its operation (payments.WithKey), which reports in it
	// whether the outcome was replayed, and when it was first produced.
	idem *payments.Idempotency
	svc  *payments.Service // whose clock times the answer (call.at)
}

// path returns the value of the route's path parameter name.
func (c *call) path(name string) string { return c.r.PathValue(name) }

// request returns the request as the library validates it: its path parameters (nil
// when the route has none), query and body. A route whose operation validates its path
// arguments itself never builds the map.
func (c *call) request() payments.Request {
	if len(c.params) > 0 && c.req.Path == nil {
		c.req.Path = make(map[string]string, len(c.params))
		for _, name := range c.params {
			c.req.Path[name] = c.r.PathValue(name)
		}
	}
	return c.req
}

// handlerFunc runs an operation of s and returns the whole response body.
type handlerFunc func(s *server, ctx context.Context, c *call) (any, error)

var pathParam = regexp.MustCompile(`\{(\w+)\}`)

// route mounts one endpoint. Every request passes the contract's checks in order: body
// size (413), authentication and the limits (401 or 429), media type (415), then the
// handler, which validates (422) and runs the operation.
func (s *server) route(mux *http.ServeMux, rt route) {
	pattern, auth, body, h := rt.pattern, rt.auth, rt.body, rt.handler
	// Routes that change something take an Idempotency-Key.
	takesKey := rt.effect == changes
	var params []string
	for _, m := range pathParam.FindAllStringSubmatch(pattern, -1) {
		params = append(params, m[1])
	}
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if g, ok := w.(*muxGuard); ok {
			g.ours = true
		}
		ctx := r.Context()
		raw, err := readBody(w, r)
		if err == errTooLarge {
			s.refuseTooLarge(w, r)
			return
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		c := &call{r: r, params: params, svc: s.svc}
		if err := s.authenticate(w, r, auth, raw, c); err != nil {
			s.writeError(w, r, err)
			return
		}
		if body == withBody {
			if len(raw) > 0 && !isJSON(r.Header.Get("Content-Type")) {
				s.writeError(w, r, statusError(http.StatusUnsupportedMediaType, "Content-Type must be application/json."))
				return
			}
			c.req.Body = raw
		}
		// The query stays nil (empty) when the request has none.
		if r.URL.RawQuery != "" {
			query := r.URL.Query()
			c.req.Query = make(map[string]string, len(query))
			for name, values := range query {
				c.req.Query[name] = values[len(values)-1] // the last one wins, as in Starlette
			}
		}
		if takesKey {
			if c.idem, err = idempotency(r, raw); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		if body == withBody && len(raw) > largeBodyBytes {
			select {
			case s.largeBodies <- struct{}{}:
				defer func() { <-s.largeBodies }()
			case <-ctx.Done():
				return // the client has gone while waiting: nothing ran, nobody to answer
			}
		}
		resp, err := h(s, ctx, c)
		if idem := c.idem; idem != nil && idem.Replayed {
			w.Header().Set(headerIdempotentReplayed, "true")
			if stored := idem.Response; stored != nil { // rendered by an earlier version
				writeBody(w, stored.Status, stored.Body)
				return
			}
		}
		if err != nil {
			s.answerError(w, r, err, c.at())
			return
		}
		writeJSON(w, http.StatusOK, resp)
	})
}

// Idempotency headers (draft-ietf-httpapi-idempotency-key-header).
const (
	headerIdempotencyKey     = "Idempotency-Key"
	headerIdempotentReplayed = "Idempotent-Replayed"
)

// idempotency returns the Idempotency-Key of a request that changes something, with the
// request's fingerprint (method, target and body), or nil when it has none.
func idempotency(r *http.Request, body []byte) (*payments.Idempotency, error) {
	values, sent := r.Header[headerIdempotencyKey]
	if !sent {
		return nil, nil
	}
	key := values[len(values)-1]
	if len(values) > 1 || !payments.ValidIdempotencyKey(key) {
		return nil, statusError(http.StatusBadRequest, fmt.Sprintf(
			"Idempotency-Key must be one value of 1 to %d printable ASCII characters.", payments.MaxIdempotencyKeyLength))
	}
	h := sha256.New()
	h.Write([]byte(r.Method + " " + r.RequestURI + "\n"))
	h.Write(body)
	return &payments.Idempotency{Key: key, Fingerprint: h.Sum(nil)}, nil
}

// errTooLarge is readBody's refusal of a body over MaxBodyBytes, answered by refuseTooLarge.
var errTooLarge = statusError(http.StatusRequestEntityTooLarge, "Request body exceeds 64 KiB.")

// readBody returns the request's body, errTooLarge beyond MaxBodyBytes: at once when the
// announced length is over it, else as soon as the reading passes it.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxBodyBytes {
		return nil, errTooLarge
	}
	if r.Body == nil || r.Body == http.NoBody { // a request without a body (GET): nothing to read or hold
		return nil, nil
	}
	// Read into a buffer of the announced size: io.ReadAll would allocate twice the body.
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength) + bytes.MinRead) // room for the read that sees the end
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(serverWriter(w), r.Body, MaxBodyBytes))
	raw := buf.Bytes()
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, errTooLarge
	}
	if err != nil {
		return nil, statusError(http.StatusBadRequest, "Could not read the request body.")
	}
	return raw, nil
}

// Reading a refused body. A server that closes a connection with unread data in it makes
// its system answer the client's next segments with a reset, which can destroy the 413
// before the client has read it; a Go client, which reads the answer while it is still
// writing, then reports a broken pipe or a reset instead (issue 30). So after its 413 the
// server reads on, and drops, what the client is still sending, as RFC 9112 (section 9.6)
// advises, within these bounds, then closes.
const (
	// drainBytes is how much more of a refused body is read: a body of up to 4 MiB ends
	// in the 413 and an orderly close. Beyond it, net/http's own lingering close takes
	// over (half-close, half a second, close): the client has had the 413 all that time,
	// but a reset may still come before a client that does not read it reads it.
	drainBytes = 4 << 20
	// drainTime bounds the reading whatever the bytes: a slow client holds the request
	// at most 2 s past its 413 (Run gives a whole request 15 s to be read), then the
	// connection closes.
	drainTime = 2 * time.Second
)

// refuseTooLarge answers a body over MaxBodyBytes with the 413 and Connection: close,
// then reads the rest of the body (at most drainBytes, for at most drainTime) and drops it.
//
// The 413 is flushed before the reading, so a client that reads while it writes has it at
// once; one that closes on reading it ends the reading too. A client that announced its
// length and asked to be told before sending it (Expect: 100-continue) has been told not
// to, and HTTP/2 needs none of it (a stream ends without closing the connection).
func (s *server) refuseTooLarge(w http.ResponseWriter, r *http.Request) {
	http1 := r.ProtoMajor == 1
	if http1 {
		w.Header().Set("Connection", "close")
	}
	s.writeError(w, r, errTooLarge)
	toldNotToSend := r.ContentLength > MaxBodyBytes && strings.EqualFold(r.Header.Get("Expect"), "100-continue")
	if !http1 || toldNotToSend || r.Body == nil || r.Body == http.NoBody {
		return
	}
	rc := http.NewResponseController(w)
	if rc.Flush() != nil || rc.SetReadDeadline(time.Now().Add(drainTime)) != nil {
		return // the client has gone, or no bound on the time: close at once
	}
	// Through MaxBytesReader on the server's own writer: past drainBytes, the server closes
	// as net/http closes after any MaxBytesReader's limit (half-close, wait, close).
	// Whatever ends the reading (the body's end, the bounds, the client gone), the answer
	// has been given.
	_, _ = io.Copy(io.Discard, http.MaxBytesReader(serverWriter(w), r.Body, drainBytes))
}

// serverWriter returns the net/http server's own writer under the wrappers of w (access
// log, mux guard): MaxBytesReader tells only that one to close the connection after the
// answer (golang/go#73754).
func serverWriter(w http.ResponseWriter) http.ResponseWriter {
	for {
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return w
		}
		w = u.Unwrap()
	}
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// jsonMux answers in the error envelope where the mux would answer by itself in plain
// text: an unknown path (404) and a known path with another method (405, with Allow).
type jsonMux struct {
	mux *http.ServeMux
	now func() time.Time
}

func (j jsonMux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	j.mux.ServeHTTP(&muxGuard{ResponseWriter: w, now: j.now}, r)
}

// muxGuard replaces any answer the mux writes itself (not found, method not allowed, a
// path-cleaning redirect) with the JSON envelope; routes mark themselves as ours.
type muxGuard struct {
	http.ResponseWriter
	now      func() time.Time
	ours     bool
	replaced bool
}

func (g *muxGuard) WriteHeader(code int) {
	if g.ours {
		g.ResponseWriter.WriteHeader(code)
		return
	}
	if g.replaced {
		return
	}
	g.replaced = true
	h := g.Header()
	h.Del("Location")
	h.Del("X-Content-Type-Options")
	if code == http.StatusMethodNotAllowed {
		writeJSON(g.ResponseWriter, code, errorEnvelope("Method not allowed.", g.now()))
		return
	}
	h.Del("Allow")
	writeJSON(g.ResponseWriter, http.StatusNotFound, errorEnvelope("Not found.", g.now()))
}

func (g *muxGuard) Write(b []byte) (int, error) {
	if g.ours {
		return g.ResponseWriter.Write(b)
	}
	if !g.replaced {
		g.WriteHeader(http.StatusNotFound)
	}
	return len(b), nil
}

func (g *muxGuard) Unwrap() http.ResponseWriter { return g.ResponseWriter }
