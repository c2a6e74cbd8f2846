package httpserver

import (
	"context"
	"net/http"
	"time"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/version"
)

// The operations endpoints, and the API's OpenAPI document, apart from the API's route table (routes.go, which the
// scenario coverage test reads): no authentication, no limits, no auth-failure counting,
// nothing about any tenant in their answers.
const (
	healthzPattern = "GET /healthz"
	readyzPattern  = "GET /readyz"
	metricsPattern = "GET /metrics"
	openAPIPattern = "GET /openapi.json"
)

// readyTimeout is how long /readyz waits for the store to answer.
const readyTimeout = time.Second

// health is the body of /healthz and /readyz.
type health struct {
	Status string        `json:"status"`
	Build  *version.Info `json:"build,omitempty"` // /healthz: which build is running
}

// build is the running binary's build information, read once: what /healthz says and
// `paymentsd version` prints. No HTTP header announces it.
var build = version.Get()

// openAPI is the API's OpenAPI document (openapi.json), the body of GET /openapi.json.
var openAPI = payments.OpenAPI()

// mountOps mounts /healthz, /readyz, /openapi.json and (unless it is served apart)
// /metrics on mux.
func (s *server) mountOps(mux *http.ServeMux) {
	mux.HandleFunc(openAPIPattern, ours(func(w http.ResponseWriter, r *http.Request) {
		writeBody(w, http.StatusOK, openAPI)
	}))
	mux.HandleFunc(healthzPattern, ours(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, health{Status: "ok", Build: &build})
	}))
	mux.HandleFunc(readyzPattern, ours(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if err := s.svc.Ping(ctx); err != nil {
			s.log.WarnContext(ctx, "not ready", "error", err.Error())
			writeJSON(w, http.StatusServiceUnavailable, health{Status: "not ready"})
			return
		}
		writeJSON(w, http.StatusOK, health{Status: "ok"})
	}))
	if !s.metricsOff {
		metrics := s.metrics.Handler()
		mux.HandleFunc(metricsPattern, ours(metrics.ServeHTTP))
	}
}

// ours marks a handler's answers as its own, not the mux's (muxGuard).
func ours(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if g, ok := w.(*muxGuard); ok {
			g.ours = true
		}
		h(w, r)
	}
}
