package console

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// routes mounts the console's pages and actions.
func (c *Console) routes() *http.ServeMux {
	mux := http.NewServeMux()
	static, _ := fs.Sub(files, "static")
	mux.Handle("GET /console/static/", http.StripPrefix("/console/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /console/login", c.loginPage)
	mux.HandleFunc("POST /console/logout", c.action(func(w http.ResponseWriter, r *http.Request, id string) {
		c.logout(id)
		http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: Prefix, MaxAge: -1, HttpOnly: true, // #nosec G124 -- Secure under TLS (a console on plain HTTP, loopback, would get no cookie back)
			SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		c.log.InfoContext(r.Context(), "console logout")
		http.Redirect(w, r, "/console/login", http.StatusSeeOther)
	}))
	for _, p := range pages {
		mux.HandleFunc("GET "+p.pattern, c.page(p.handle))
	}
	for _, a := range actions {
		mux.HandleFunc("POST "+a.pattern, c.action(c.runAction(a)))
	}
	mux.HandleFunc("/console/", func(w http.ResponseWriter, r *http.Request) {
		if _, _, ok := c.session(r); !ok {
			c.toLogin(w, r)
			return
		}
		c.render(w, r, http.StatusNotFound, "error", view{Title: "Not found"}, errorPage{Message: "There is no such page."})
	})
	return mux
}

// pageFunc answers a page for a session: it returns the template and its data, or an
// error (errPage, or an error of the library).
type pageFunc func(c *Console, r *http.Request, v *view) (tmpl string, data any, err error)

// pageRoute is a page of the console: its pattern (GET) and handler.
type pageRoute struct {
	pattern string
	handle  pageFunc
}

// pages are the console's pages (pages.go).
var pages = []pageRoute{
	{"/console/{$}", (*Console).platformsPage},
	{"/console/platforms/{platform}/users", (*Console).usersPage},
	{"/console/platforms/{platform}/users/{user}", (*Console).userPage},
	{"/console/platforms/{platform}/events", (*Console).eventsPage},
	{"/console/platforms/{platform}/events/{event}", (*Console).eventPage},
	{"/console/platforms/{platform}/endpoints", (*Console).endpointsPage},
	{"/console/platforms/{platform}/endpoints/{endpoint}", (*Console).endpointPage},
	{"/console/rates", (*Console).ratesPage},
	{"/console/rules", (*Console).rulesPage},
	{"/console/operations", (*Console).operationsPage},
}

// view is what every page shows around its own content.
type view struct {
	Title    string
	CSRF     string
	Platform *platformRef
	Flash    string
	Sandbox  bool
}

// platformRef names the platform a page is about, for its navigation.
type platformRef struct {
	ID    string
	Name  string
	Users int64
}

// errorPage is the content of an error page.
type errorPage struct{ Message string }

// errPage is an error a page answers with its own status and message.
type errPage struct {
	status  int
	message string
}

func (e *errPage) Error() string { return e.message }

// notFound is the error of a page about something that does not exist.
func notFound(what string) error {
	return &errPage{http.StatusNotFound, "There is no such " + what + "."}
}

// badRequest is the error of a page asked for with a value it cannot take.
func badRequest(msg string) error { return &errPage{http.StatusUnprocessableEntity, msg} }

// page wraps a page's handler: no session redirects to the login page.
func (c *Console) page(h pageFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, s, ok := c.session(r)
		if !ok {
			c.toLogin(w, r)
			return
		}
		v := view{CSRF: s.csrf, Sandbox: c.svc.Environment() == payments.Sandbox, Flash: flash(r.URL.Query())}
		tmpl, data, err := h(c, r, &v)
		if err != nil {
			c.fail(w, r, v, err)
			return
		}
		c.render(w, r, http.StatusOK, tmpl, v, data)
	}
}

// flash is the message an action's redirect asks its page to show (?done=, and for a
// recovery ?queued=, how many deliveries it queued).
func flash(q url.Values) string {
	if q.Get("done") == "recovered" {
		n, err := strconv.ParseInt(q.Get("queued"), 10, 64)
		if err != nil {
			return ""
		}
		return fmt.Sprintf("%d deliveries queued again: they are sent in turn.", n)
	}
	return flashes[q.Get("done")]
}

// flashes are the messages of the actions that say no more than that they were done.
var flashes = map[string]string{
	"resent":   "The event is to be delivered again: its new attempt appears below once made.",
	"enabled":  "The endpoint is enabled.",
	"paused":   "The endpoint is paused: it receives nothing until enabled.",
	"tested":   "A webhook.test event is on its way to the endpoint: its attempt appears below once made.",
	"verified": "The user's identity verification succeeded.",
	"failed":   "The user's identity verification failed.",
}

// fail answers a page's or action's error: its own status for an errPage or a library
// error the caller caused, 500 for anything else (logged).
func (c *Console) fail(w http.ResponseWriter, r *http.Request, v view, err error) {
	var ep *errPage
	status, msg := http.StatusInternalServerError, "Something went wrong: the server's log says what."
	switch code := payments.ErrorCode(err); {
	case errors.As(err, &ep):
		status, msg = ep.status, ep.message
	case code == payments.CodeNotFound:
		status, msg = http.StatusNotFound, errorMessage(err)
	case code == payments.CodeInvalid:
		status, msg = http.StatusUnprocessableEntity, errorMessage(err)
	case code == payments.CodeConflict:
		status, msg = http.StatusConflict, errorMessage(err)
	case code == payments.CodeForbidden:
		status, msg = http.StatusForbidden, errorMessage(err)
	case code == payments.CodeUnavailable:
		status, msg = http.StatusServiceUnavailable, "The database cannot be reached for now: try again later."
	default:
		c.log.ErrorContext(r.Context(), "console", "path", r.URL.Path, "error", err.Error())
	}
	v.Title = http.StatusText(status)
	c.render(w, r, status, "error", v, errorPage{Message: msg})
}

// errorMessage is what a page says of a library error: its message, or each field's
// failure as the API's 422 lists them.
func errorMessage(err error) string {
	var e *payments.Error
	if !errors.As(err, &e) {
		return err.Error()
	}
	if len(e.Fields) == 0 {
		return e.Message
	}
	parts := make([]string, 0, len(e.Fields))
	for _, f := range e.Fields {
		loc := make([]string, 0, len(f.Loc))
		for _, l := range f.Loc {
			loc = append(loc, fmt.Sprint(l))
		}
		parts = append(parts, strings.Join(loc, ".")+": "+f.Msg)
	}
	return strings.Join(parts, "; ")
}

// toLogin sends a request without a session to the login page.
func (c *Console) toLogin(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/console/login", http.StatusSeeOther)
}

// loginPage checks a token and starts a session (303 to the console), or shows the login
// form, saying when a token was wrong.
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	v := view{Title: "Log in"}
	token, given := r.URL.Query()["token"]
	if !given {
		c.render(w, r, http.StatusOK, "login", v, loginForm{})
		return
	}
	if !c.logins.allow(clientAddr(r), c.now()) {
		w.Header().Set("Retry-After", strconv.Itoa(int(loginEvery/time.Second)))
		c.log.WarnContext(r.Context(), "console login throttled", "client", clientAddr(r))
		c.render(w, r, http.StatusTooManyRequests, "login", v, loginForm{Message: "Too many attempts: wait a few seconds and try again."})
		return
	}
	if len(token) != 1 || !c.checkToken(token[0]) {
		c.log.WarnContext(r.Context(), "console login refused", "client", clientAddr(r))
		c.render(w, r, http.StatusUnauthorized, "login", v, loginForm{Message: "That token is wrong."})
		return
	}
	id := c.login()
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: Prefix, HttpOnly: true, // #nosec G124 -- Secure under TLS (a console on plain HTTP, loopback, would get no cookie back)
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int(SessionTTL / time.Second)})
	c.log.InfoContext(r.Context(), "console login", "client", clientAddr(r))
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}

// loginForm is the login page's content.
type loginForm struct{ Message string }

// maxFormBytes bounds an action's form.
const maxFormBytes = 8 << 10

// action wraps a state-changing handler: it needs a session and the session's CSRF token
// in the form's csrf field (403 without either).
func (c *Console) action(h func(w http.ResponseWriter, r *http.Request, sessionID string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, s, ok := c.session(r)
		if !ok {
			c.forbidden(w, r, view{}, "No session: log in first.")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if err := r.ParseForm(); err != nil {
			c.render(w, r, http.StatusBadRequest, "error", view{Title: "Bad request", CSRF: s.csrf}, errorPage{Message: "The form could not be read."})
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.csrf)) != 1 {
			c.forbidden(w, r, view{CSRF: s.csrf}, "The form's CSRF token is missing or wrong: reload the page and try again.")
			return
		}
		h(w, r, id)
	}
}

// forbidden answers 403 with msg.
func (c *Console) forbidden(w http.ResponseWriter, r *http.Request, v view, msg string) {
	v.Title = "Forbidden"
	c.render(w, r, http.StatusForbidden, "error", v, errorPage{Message: msg})
}

// render writes the page tmpl with its view and data.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, tmpl string, v view, data any) {
	t := c.pages[tmpl]
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, "layout", struct {
		View view
		Data any
	}{v, data}); err != nil {
		c.log.ErrorContext(r.Context(), "console template", "template", tmpl, "error", err.Error())
		http.Error(w, "Internal error.", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

// parsePages parses each page's template with the layout.
func parsePages() map[string]*template.Template {
	names, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		out[base] = template.Must(template.New(base).Funcs(funcs).ParseFS(files, "templates/layout.html", n))
	}
	return out
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"time": func(t any) string {
		switch t := t.(type) {
		case time.Time:
			if t.IsZero() {
				return "—"
			}
			return t.UTC().Format("2006-01-02 15:04:05Z")
		case *time.Time:
			if t == nil {
				return "—"
			}
			return t.UTC().Format("2006-01-02 15:04:05Z")
		}
		return ""
	},
	"deref": func(s any) string {
		switch s := s.(type) {
		case *string:
			if s == nil {
				return "—"
			}
			return *s
		case *int64:
			if s == nil {
				return "—"
			}
			return strconv.FormatInt(*s, 10)
		}
		return ""
	},
	"query": func(kv ...string) template.URL {
		q := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] != "" {
				q.Set(kv[i], kv[i+1])
			}
		}
		if len(q) == 0 {
			return ""
		}
		return template.URL("?" + q.Encode()) // #nosec G203 -- url.Values.Encode escapes every value
	},
}

// platformID parses the {platform} of the path; errors as a page's 404.
func platformID(r *http.Request) (uuid.UUID, error) {
	id, err := uuid.Parse(r.PathValue("platform"))
	if err != nil {
		return uuid.Nil, notFound("platform")
	}
	return id, nil
}
