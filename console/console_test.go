package console_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/console"
	"github.com/platform-payments/payments/dispatch"
	"github.com/platform-payments/payments/httpserver"
	"github.com/platform-payments/payments/internal/pgtest"
)

const token = "test-console-token-0123456789abcdef"

// fixture is a service with a platform, a user holding an account, a card and a payee
// with a bank and an address, and an endpoint on loopback that has received the events,
// served with the console.
type fixture struct {
	svc      *payments.Service
	srv      *httptest.Server
	platform payments.PlatformCredentials
	user     payments.User
	email    string
	apiKey   payments.APIKey
	endpoint payments.WebhookEndpoint
	eventID  string
	samples  *console.Sampler
	// secrets no page may show: secrets and full account numbers.
	secrets []string
}

const (
	accountNumber   = "987654321012"
	payeeBankNumber = "GB29NWBK60161331926819"
)

func newFixture(t *testing.T, env payments.Environment) *fixture {
	t.Helper()
	ctx := context.Background()
	dsn, keyFile := pgtest.NewStore(t)
	allow := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	svc, err := payments.Open(ctx, dsn, payments.Options{KeyFile: keyFile, Environment: env, WebhookAllow: allow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{svc: svc, email: "ada@example.com"}
	f.platform, err = svc.CreatePlatform(ctx, "Acme Payroll", env)
	must(err)
	pid := f.platform.PlatformID

	// A production endpoint must be https: the sandbox's has one, on loopback.
	if env == payments.Sandbox {
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			_, _ = io.WriteString(w, "received, thanks")
		}))
		t.Cleanup(receiver.Close)
		f.endpoint, err = svc.CreateWebhookEndpoint(ctx, pid, payments.NewWebhookEndpoint{URL: receiver.URL + "/hooks"})
		must(err)
	}

	f.user, err = svc.CreateUser(ctx, pid, payments.NewUser{Name: "Ada Lovelace", Email: &f.email,
		PhoneCountryCode: new("+44"), Phone: new("2079460000")})
	must(err)
	uid := f.user.UserID.String()
	f.apiKey, err = svc.CreateAPIKey(ctx, uid)
	must(err)
	holder := "Ada Lovelace"
	_, err = svc.AddBankAccount(ctx, pid, payments.NewBankAccount{UserID: uid, AccountHolderName: &holder, BankName: "First Bank",
		AccountNumber: accountNumber, RoutingNumber: "021000021", AccountType: "PERSONAL_CHECKING"})
	must(err)
	_, err = svc.AddCard(ctx, uid, payments.NewCard{Brand: "visa", Last4: "4242", ExpMonth: 12, ExpYear: 2030})
	must(err)
	payeeEmail := "bob@example.com"
	payee, err := svc.CreatePayee(ctx, payments.Caller{UserID: f.user.UserID, PlatformID: pid}, payments.NewPayee{Name: "Bob Builder", Email: &payeeEmail})
	must(err)
	_, err = svc.AddPayeeBank(ctx, pid, uid, payments.NewPayeeBank{PayeeID: payee.PayeeID.String(), AccountNumber: payeeBankNumber, Country: "GB", BankAccType: "current"})
	must(err)
	_, err = svc.AddPayeeAddress(ctx, uid, payee.PayeeID.String(), payments.NewPayeeAddress{Name: "Bob", AddressLine1: "1 High Street",
		City: "London", State: "LDN", Zipcode: "SW1A1AA", Country: "GB"})
	must(err)
	f.secrets = []string{f.platform.Secret, f.apiKey.APISecret, accountNumber, payeeBankNumber}
	if f.endpoint.Secret != "" {
		f.secrets = append(f.secrets, f.endpoint.Secret)
	}

	page, err := svc.ListEvents(ctx, pid, payments.EventQuery{Type: "user.created"})
	must(err)
	if len(page.Events) == 0 {
		t.Fatal("no user.created event")
	}
	f.eventID = page.Events[0].ID.String()

	metrics := httpserver.NewMetrics(svc)
	f.samples = console.NewSampler(metrics.Registry())
	f.samples.SampleAt(time.Now())
	c := console.New(svc, console.Options{Token: token, Samples: f.samples})
	f.srv = httptest.NewServer(httpserver.NewWithOptions(svc, nil, httpserver.Options{Console: c, Metrics: metrics}))
	t.Cleanup(f.srv.Close)
	if env != payments.Sandbox {
		return f
	}

	// The dispatcher delivers the events; wait (on a loaded machine, as long as it takes)
	// until the user's event has its first attempt.
	dctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	d := dispatch.New(svc, dispatch.Options{Allow: allow, Exclusive: !payments.IsPostgres(dsn)})
	go func() { done <- d.Run(dctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("dispatcher: %v", err)
		}
	})
	f.waitAttempts(t, 1)
	return f
}

// waitAttempts waits until the fixture's event has at least n attempts.
func (f *fixture) waitAttempts(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		e, err := f.svc.GetEvent(context.Background(), f.platform.PlatformID, f.eventID)
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Attempts) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the event has %d attempts, not %d", len(e.Attempts), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// client returns a browser-like client of the fixture's server that follows no redirect.
func (f *fixture) client(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// login logs c in and returns the session's CSRF token (read from a page's form).
func (f *fixture) login(t *testing.T, c *http.Client) string {
	t.Helper()
	res := f.get(t, c, "/console/login?token="+url.QueryEscape(token))
	if res.status != http.StatusSeeOther || res.header.Get("Location") != "/console/" {
		t.Fatalf("login: %d to %q", res.status, res.header.Get("Location"))
	}
	page := f.get(t, c, "/console/")
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("no CSRF token in the platforms page: %s", page.body)
	}
	return m[1]
}

type answer struct {
	status int
	header http.Header
	body   string
}

func (f *fixture) do(t *testing.T, c *http.Client, req *http.Request) answer {
	t.Helper()
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{res.StatusCode, res.Header, string(b)}
}

func (f *fixture) get(t *testing.T, c *http.Client, path string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f.do(t, c, req)
}

func (f *fixture) post(t *testing.T, c *http.Client, path string, form url.Values) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return f.do(t, c, req)
}

// paths are the fixture's pages, one of each.
func (f *fixture) paths() []string {
	p := "/console/platforms/" + f.platform.PlatformID.String()
	return []string{"/console/", p + "/users", p + "/users?q=ada", p + "/users/" + f.user.UserID.String(),
		p + "/events", p + "/events/" + f.eventID, p + "/endpoints", p + "/endpoints/" + f.endpoint.ID.String(),
		"/console/rates", "/console/rules?country=GB&currency=GBP", "/console/operations"}
}

// actionPaths are the fixture's actions, one of each.
func (f *fixture) actionPaths() []string {
	p := "/console/platforms/" + f.platform.PlatformID.String()
	ep := p + "/endpoints/" + f.endpoint.ID.String()
	return []string{p + "/events/" + f.eventID + "/resend", ep + "/enable", ep + "/pause", ep + "/recover", ep + "/test",
		p + "/users/" + f.user.UserID.String() + "/verify", p + "/users/" + f.user.UserID.String() + "/fail-verification",
		"/console/logout"}
}

func checkHeaders(t *testing.T, path string, h http.Header) {
	t.Helper()
	want := map[string]string{
		"X-Frame-Options":        "DENY",
		"Referrer-Policy":        "no-referrer",
		"X-Content-Type-Options": "nosniff",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s: %s is %q, want %q", path, k, got, v)
		}
	}
	csp := h.Get("Content-Security-Policy")
	for _, d := range []string{"default-src 'none'", "frame-ancestors 'none'", "form-action 'self'"} {
		if !strings.Contains(csp, d) {
			t.Errorf("%s: Content-Security-Policy %q lacks %q", path, csp, d)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "script-src") {
		t.Errorf("%s: Content-Security-Policy %q allows script", path, csp)
	}
}

func TestNoSession(t *testing.T) {
	f := newFixture(t, payments.Sandbox)
	c := f.client(t)
	for _, p := range append(f.paths(), "/console/nowhere") {
		res := f.get(t, c, p)
		if res.status != http.StatusSeeOther || res.header.Get("Location") != "/console/login" {
			t.Errorf("GET %s without a session: %d to %q, want 303 to /console/login", p, res.status, res.header.Get("Location"))
		}
		checkHeaders(t, p, res.header)
	}
	for _, p := range f.actionPaths() {
		res := f.post(t, c, p, url.Values{"csrf": {"anything"}})
		if res.status != http.StatusForbidden {
			t.Errorf("POST %s without a session: %d, want 403", p, res.status)
		}
	}
	// A session cookie the console did not issue is no session.
	u, _ := url.Parse(f.srv.URL + "/console/")
	c.Jar.SetCookies(u, []*http.Cookie{{Name: "payments_console", Value: "forged", Path: "/console/"}})
	if res := f.get(t, c, "/console/"); res.status != http.StatusSeeOther {
		t.Errorf("a forged cookie: %d, want 303", res.status)
	}
}

func TestLogin(t *testing.T) {
	f := newFixture(t, payments.Sandbox)
	c := f.client(t)

	form := f.get(t, c, "/console/login")
	if form.status != http.StatusOK || !strings.Contains(form.body, `name="token"`) {
		t.Errorf("login form: %d %s", form.status, form.body)
	}
	checkHeaders(t, "/console/login", form.header)

	wrong := f.get(t, c, "/console/login?token=wrong")
	if wrong.status != http.StatusUnauthorized || !strings.Contains(wrong.body, "That token is wrong.") {
		t.Errorf("wrong token: %d %s", wrong.status, wrong.body)
	}
	if sc := wrong.header.Values("Set-Cookie"); len(sc) != 0 {
		t.Errorf("wrong token set cookies %q", sc)
	}
	if res := f.get(t, c, "/console/"); res.status != http.StatusSeeOther {
		t.Errorf("after a wrong token: %d, want 303 to login", res.status)
	}

	res := f.get(t, c, "/console/login?token="+token)
	if res.status != http.StatusSeeOther || res.header.Get("Location") != "/console/" {
		t.Fatalf("login: %d to %q", res.status, res.header.Get("Location"))
	}
	cookie := res.header.Get("Set-Cookie")
	for _, attr := range []string{"payments_console=", "Path=/console/", "HttpOnly", "SameSite=Strict"} {
		if !strings.Contains(cookie, attr) {
			t.Errorf("session cookie %q lacks %s", cookie, attr)
		}
	}
	if strings.Contains(cookie, "Secure") {
		t.Errorf("session cookie %q is Secure over plain HTTP", cookie)
	}
	if strings.Contains(cookie, token) {
		t.Errorf("session cookie %q carries the token", cookie)
	}
	if page := f.get(t, c, "/console/"); page.status != http.StatusOK || !strings.Contains(page.body, "Acme Payroll") {
		t.Errorf("platforms page after login: %d", page.status)
	}

	// Logging out ends the session: the cookie no longer opens a page.
	csrf := f.login(t, c)
	saved := c.Jar.Cookies(mustURL(t, f.srv.URL+"/console/"))
	if out := f.post(t, c, "/console/logout", url.Values{"csrf": {csrf}}); out.status != http.StatusSeeOther {
		t.Errorf("logout: %d", out.status)
	}
	c.Jar.SetCookies(mustURL(t, f.srv.URL+"/console/"), saved)
	if res := f.get(t, c, "/console/"); res.status != http.StatusSeeOther {
		t.Errorf("a logged-out session's cookie: %d, want 303", res.status)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestLoginThrottled(t *testing.T) {
	f := newFixture(t, payments.Sandbox)
	c := f.client(t)
	statuses := []int{}
	for range 7 {
		statuses = append(statuses, f.get(t, c, "/console/login?token=guess").status)
	}
	if !slices.Contains(statuses, http.StatusTooManyRequests) {
		t.Fatalf("7 wrong tokens at once: %v, want a 429", statuses)
	}
	// Throttled, even the right token is refused (and sets no cookie) until the wait is over.
	res := f.get(t, c, "/console/login?token="+token)
	if res.status != http.StatusTooManyRequests || res.header.Get("Retry-After") == "" || len(res.header.Values("Set-Cookie")) != 0 {
		t.Errorf("the right token while throttled: %d, Retry-After %q, cookies %q", res.status, res.header.Get("Retry-After"), res.header.Values("Set-Cookie"))
	}
}

func TestCSRF(t *testing.T) {
	f := newFixture(t, payments.Sandbox)
	c := f.client(t)
	csrf := f.login(t, c)
	for _, p := range f.actionPaths() {
		for name, form := range map[string]url.Values{"missing": {}, "wrong": {"csrf": {csrf + "x"}}, "empty": {"csrf": {""}}} {
			res := f.post(t, c, p, form)
			if res.status != http.StatusForbidden || !strings.Contains(res.body, "CSRF") {
				t.Errorf("POST %s, CSRF token %s: %d, want 403", p, name, res.status)
			}
		}
	}
	// Nothing happened: the event has its one attempt and the user is not verified.
	e, err := f.svc.GetEvent(context.Background(), f.platform.PlatformID, f.eventID)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Attempts) != 1 {
		t.Errorf("refused resends: %d attempts", len(e.Attempts))
	}
	// Another session's token is a wrong one.
	other := f.client(t)
	otherCSRF := f.login(t, other)
	if res := f.post(t, c, f.actionPaths()[0], url.Values{"csrf": {otherCSRF}}); res.status != http.StatusForbidden {
		t.Errorf("another session's CSRF token: %d, want 403", res.status)
	}
	// GET on an action is no action.
	if res := f.get(t, c, f.actionPaths()[0]); res.status == http.StatusSeeOther || res.status == http.StatusOK {
		t.Errorf("GET on an action: %d", res.status)
	}
}

// TestCrawl follows every console link from the platforms page: each answers 200 with the
// security headers, no script, no inline style and no secret or full account number; the
// user's email is on the user's pages and the event's id on the event's.
func TestCrawl(t *testing.T) {
	f := newFixture(t, payments.Sandbox)
	c := f.client(t)
	f.login(t, c)
	href := regexp.MustCompile(`(href|action|src)="([^"]*)"`)
	seen := map[string]bool{}
	queue := append([]string{}, f.paths()...)
	for len(queue) > 0 && len(seen) < 500 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		res := f.get(t, c, p)
		if res.status != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", p, res.status, res.body)
			continue
		}
		checkHeaders(t, p, res.header)
		if strings.HasSuffix(p, ".css") {
			continue
		}
		for _, s := range f.secrets {
			if strings.Contains(res.body, s) {
				t.Errorf("GET %s shows the secret or number %q", p, s)
			}
		}
		for _, bad := range []string{"<script", " style=", "javascript:", `src="http`, `href="http`, `action="http`, "@import"} {
			if strings.Contains(res.body, bad) {
				t.Errorf("GET %s has %q", p, bad)
			}
		}
		for _, m := range href.FindAllStringSubmatch(res.body, -1) {
			link := strings.ReplaceAll(m[2], "&amp;", "&")
			if strings.HasPrefix(link, "?") {
				link = strings.SplitN(p, "?", 2)[0] + link
			}
			if !strings.HasPrefix(link, "/console/") {
				t.Errorf("GET %s links outside the console: %q", p, m[2])
				continue
			}
			if m[1] == "action" && !strings.HasSuffix(link, "/users") && link != "/console/rates" && link != "/console/rules" {
				continue // a POST form's action: posted in the action tests
			}
			queue = append(queue, link)
		}
	}
	userPage := "/console/platforms/" + f.platform.PlatformID.String() + "/users/" + f.user.UserID.String()
	eventPage := "/console/platforms/" + f.platform.PlatformID.String() + "/events/" + f.eventID
	for _, p := range []string{userPage, eventPage, "/console/static/style.css"} {
		if !seen[p] {
			t.Errorf("the crawl never reached %s", p)
		}
	}
	if body := f.get(t, c, userPage).body; !strings.Contains(body, "<dd>&#43;44 2079460000</dd>") || !strings.Contains(body, f.email) || !strings.Contains(body, "…"+accountNumber[len(accountNumber)-4:]) {
		t.Errorf("the user's page lacks the email or the account's last four digits:\n%s", body)
	}
	if body := f.get(t, c, eventPage).body; !strings.Contains(body, f.eventID) || !strings.Contains(body, "received, thanks") {
		t.Errorf("the event's page lacks its id or the receiver's answer:\n%s", body)
	}
	// The operations page shows the requests of the crawl, from the figures /metrics exports.
	f.samples.SampleAt(time.Now())
	ops := f.get(t, c, "/console/operations").body
	if m := regexp.MustCompile(`<tr><td>[^<]*</td><td class="num">(\d+)</td>`).FindStringSubmatch(ops); m == nil || m[1] == "0" {
		t.Errorf("the operations page shows no request of the crawl:\n%s", ops)
	}
	rules := 0
	for p := range seen {
		if strings.HasPrefix(p, "/console/rules?country=") {
			rules++
		}
	}
	if rules < 2 {
		t.Errorf("the crawl reached the rules of %d countries and currencies from the rules page", rules)
	}
	t.Logf("crawled %d pages, %d of them payee rules", len(seen), rules)
}

func TestActions(t *testing.T) {
	f := newFixture(t, payments.Sandbox)
	c := f.client(t)
	csrf := f.login(t, c)
	ctx := context.Background()
	pid := f.platform.PlatformID.String()
	p := "/console/platforms/" + pid

	t.Run("Resend", func(t *testing.T) {
		res := f.post(t, c, p+"/events/"+f.eventID+"/resend", url.Values{"csrf": {csrf}})
		want := p + "/events/" + f.eventID + "?done=resent"
		if res.status != http.StatusSeeOther || res.header.Get("Location") != want {
			t.Fatalf("resend: %d to %q, want 303 to %q\n%s", res.status, res.header.Get("Location"), want, res.body)
		}
		f.waitAttempts(t, 2)
		page := f.get(t, c, want)
		if n := strings.Count(page.body, `<tr class="attempt">`); n != 2 || !strings.Contains(page.body, "delivered again") {
			t.Errorf("the event's page after a resend shows %d attempts", n)
		}
		// To one endpoint, named in the form.
		res = f.post(t, c, p+"/events/"+f.eventID+"/resend", url.Values{"csrf": {csrf}, "endpoint_id": {f.endpoint.ID.String()}})
		if res.status != http.StatusSeeOther {
			t.Errorf("resend to one endpoint: %d\n%s", res.status, res.body)
		}
		f.waitAttempts(t, 3)
	})
	t.Run("ResendErrors", func(t *testing.T) {
		for _, tc := range []struct {
			name, path string
			form       url.Values
			status     int
		}{
			{"UnknownEvent", p + "/events/" + "01a00000-0000-7000-8000-000000000000" + "/resend", url.Values{}, http.StatusNotFound},
			{"MalformedEvent", p + "/events/nope/resend", url.Values{}, http.StatusUnprocessableEntity},
			{"UnknownEndpoint", p + "/events/" + f.eventID + "/resend", url.Values{"endpoint_id": {"01a00000-0000-7000-8000-000000000000"}}, http.StatusNotFound},
			{"MalformedEndpoint", p + "/events/" + f.eventID + "/resend", url.Values{"endpoint_id": {"x"}}, http.StatusUnprocessableEntity},
			{"UnknownPlatform", "/console/platforms/01a00000-0000-7000-8000-000000000000/events/" + f.eventID + "/resend", url.Values{}, http.StatusNotFound},
			{"MalformedPlatform", "/console/platforms/nope/events/" + f.eventID + "/resend", url.Values{}, http.StatusNotFound},
		} {
			t.Run(tc.name, func(t *testing.T) {
				tc.form.Set("csrf", csrf)
				if res := f.post(t, c, tc.path, tc.form); res.status != tc.status {
					t.Errorf("%d, want %d\n%s", res.status, tc.status, res.body)
				}
			})
		}
	})
	t.Run("Enable", func(t *testing.T) {
		res := f.post(t, c, p+"/endpoints/"+f.endpoint.ID.String()+"/enable", url.Values{"csrf": {csrf}})
		if res.status != http.StatusSeeOther || !strings.HasSuffix(res.header.Get("Location"), "?done=enabled") {
			t.Errorf("enable: %d to %q", res.status, res.header.Get("Location"))
		}
		if res := f.post(t, c, p+"/endpoints/01a00000-0000-7000-8000-000000000000/enable", url.Values{"csrf": {csrf}}); res.status != http.StatusNotFound {
			t.Errorf("enable an unknown endpoint: %d", res.status)
		}
	})
	t.Run("EndpointOperations", func(t *testing.T) {
		ep := p + "/endpoints/" + f.endpoint.ID.String()
		unknown := p + "/endpoints/01a00000-0000-7000-8000-000000000000"
		since := time.Now().UTC().Add(-time.Hour).Format("2006-01-02T15:04")
		res := f.post(t, c, ep+"/test", url.Values{"csrf": {csrf}})
		if res.status != http.StatusSeeOther || !strings.Contains(res.header.Get("Location"), p+"/events/") || !strings.HasSuffix(res.header.Get("Location"), "?done=tested") {
			t.Errorf("test: %d to %q\n%s", res.status, res.header.Get("Location"), res.body)
		}
		res = f.post(t, c, ep+"/recover", url.Values{"csrf": {csrf}, "since": {since}})
		if res.status != http.StatusSeeOther || !strings.Contains(res.header.Get("Location"), "?queued=") || !strings.HasSuffix(res.header.Get("Location"), "&done=recovered") {
			t.Errorf("recover: %d to %q\n%s", res.status, res.header.Get("Location"), res.body)
		}
		for _, tc := range []struct {
			name, path string
			form       url.Values
			status     int
		}{
			{"RecoverNoSince", ep + "/recover", url.Values{}, http.StatusUnprocessableEntity},
			{"RecoverBadUntil", ep + "/recover", url.Values{"since": {since}, "until": {"soon"}}, http.StatusUnprocessableEntity},
			{"RecoverTooOld", ep + "/recover", url.Values{"since": {"2001-01-01T00:00"}}, http.StatusUnprocessableEntity},
			{"RecoverUnknown", unknown + "/recover", url.Values{"since": {since}}, http.StatusNotFound},
			{"TestUnknown", unknown + "/test", url.Values{}, http.StatusNotFound},
			{"PauseUnknown", unknown + "/pause", url.Values{}, http.StatusNotFound},
		} {
			t.Run(tc.name, func(t *testing.T) {
				tc.form.Set("csrf", csrf)
				if res := f.post(t, c, tc.path, tc.form); res.status != tc.status {
					t.Errorf("%d, want %d\n%s", res.status, tc.status, res.body)
				}
			})
		}
		res = f.post(t, c, ep+"/pause", url.Values{"csrf": {csrf}})
		if res.status != http.StatusSeeOther || !strings.HasSuffix(res.header.Get("Location"), "?done=paused") {
			t.Errorf("pause: %d to %q", res.status, res.header.Get("Location"))
		}
		// A paused endpoint takes no test event and no recovery: the library's 409.
		for _, action := range []string{"/test", "/recover"} {
			if res := f.post(t, c, ep+action, url.Values{"csrf": {csrf}, "since": {since}}); res.status != http.StatusConflict {
				t.Errorf("%s on a paused endpoint: %d, want 409\n%s", action, res.status, res.body)
			}
		}
		if res := f.post(t, c, ep+"/enable", url.Values{"csrf": {csrf}}); res.status != http.StatusSeeOther {
			t.Errorf("enable after pause: %d", res.status)
		}
	})
	t.Run("Verification", func(t *testing.T) {
		user := p + "/users/" + f.user.UserID.String()
		res := f.post(t, c, user+"/fail-verification", url.Values{"csrf": {csrf}, "reason": {"document_unreadable"}})
		if res.status != http.StatusSeeOther || res.header.Get("Location") != user+"?done=failed" {
			t.Fatalf("fail verification: %d to %q\n%s", res.status, res.header.Get("Location"), res.body)
		}
		res = f.post(t, c, user+"/fail-verification", url.Values{"csrf": {csrf}, "reason": {""}})
		if res.status != http.StatusUnprocessableEntity {
			t.Errorf("fail verification without a reason: %d, want 422", res.status)
		}
		res = f.post(t, c, user+"/verify", url.Values{"csrf": {csrf}})
		if res.status != http.StatusSeeOther || res.header.Get("Location") != user+"?done=verified" {
			t.Fatalf("verify: %d to %q", res.status, res.header.Get("Location"))
		}
		page := f.get(t, c, user+"?done=verified")
		if strings.Contains(page.body, "<dd>no</dd>") || !strings.Contains(page.body, "verification succeeded") {
			t.Errorf("the user's page after verifying:\n%s", page.body)
		}
		events, err := f.svc.ListEvents(ctx, f.platform.PlatformID, payments.EventQuery{Type: "user.verification.succeeded"})
		if err != nil || len(events.Events) != 1 {
			t.Errorf("user.verification.succeeded events: %d, %v", len(events.Events), err)
		}
		// Another platform's user is no user of this one.
		other, err := f.svc.CreatePlatform(ctx, "Other", payments.Sandbox)
		if err != nil {
			t.Fatal(err)
		}
		res = f.post(t, c, "/console/platforms/"+other.PlatformID.String()+"/users/"+f.user.UserID.String()+"/verify", url.Values{"csrf": {csrf}})
		if res.status != http.StatusNotFound {
			t.Errorf("verify through another platform: %d, want 404", res.status)
		}
	})
}

func TestVerificationSandboxOnly(t *testing.T) {
	f := newFixture(t, payments.Production)
	c := f.client(t)
	csrf := f.login(t, c)
	user := "/console/platforms/" + f.platform.PlatformID.String() + "/users/" + f.user.UserID.String()
	if page := f.get(t, c, user); strings.Contains(page.body, "/verify") {
		t.Errorf("a production user's page offers verification")
	}
	for _, a := range []string{"/verify", "/fail-verification"} {
		if res := f.post(t, c, user+a, url.Values{"csrf": {csrf}, "reason": {"x"}}); res.status != http.StatusForbidden {
			t.Errorf("POST %s on production: %d, want 403", a, res.status)
		}
	}
}

func TestPageErrors(t *testing.T) {
	f := newFixture(t, payments.Sandbox)
	c := f.client(t)
	f.login(t, c)
	p := "/console/platforms/" + f.platform.PlatformID.String()
	unknown := "01a00000-0000-7000-8000-000000000000"
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/console/nowhere", http.StatusNotFound},
		{"/console/?page=0", http.StatusUnprocessableEntity},
		{"/console/?page=x", http.StatusUnprocessableEntity},
		{"/console/platforms/" + unknown + "/users", http.StatusNotFound},
		{"/console/platforms/nope/events", http.StatusNotFound},
		{p + "/users?page=-1", http.StatusUnprocessableEntity},
		{p + "/users?q=ada&after=x", http.StatusUnprocessableEntity},
		{p + "/users?q=" + strings.Repeat("a", 201), http.StatusUnprocessableEntity},
		{p + "/users/" + unknown, http.StatusNotFound},
		{p + "/users/nope", http.StatusNotFound},
		{p + "/events?since=yesterday", http.StatusUnprocessableEntity},
		{p + "/events?after=nope", http.StatusUnprocessableEntity},
		{p + "/events/" + unknown, http.StatusNotFound},
		{p + "/events/nope", http.StatusUnprocessableEntity},
		{p + "/endpoints/" + unknown, http.StatusNotFound},
		{"/console/rates?currency=XX", http.StatusUnprocessableEntity},
		{"/console/rules?country=ZZ&currency=USD", http.StatusUnprocessableEntity},
	} {
		res := f.get(t, c, tc.path)
		if res.status != tc.status {
			t.Errorf("GET %s: %d, want %d", tc.path, res.status, tc.status)
		}
		checkHeaders(t, tc.path, res.header)
		if m := regexp.MustCompile(`<p class="error">([^<]*)`).FindStringSubmatch(res.body); m != nil {
			t.Logf("GET %s: %d %s", tc.path, res.status, m[1])
		}
		if strings.Contains(res.body, "payments: ") || !strings.Contains(res.body, `<p class="error">`) {
			t.Errorf("GET %s: the error page does not say what went wrong in the library's words:\n%s", tc.path, res.body)
		}
	}
}

func TestSearchAndFilters(t *testing.T) {
	f := newFixture(t, payments.Sandbox)
	c := f.client(t)
	f.login(t, c)
	p := "/console/platforms/" + f.platform.PlatformID.String()
	for q, found := range map[string]bool{"ada": true, "LOVEL": true, "ADA@EXAMPLE.COM": true, "example.com": false, "Ada Lovelace": true, "ada@example": false, "%": false, "_": false, "zzz": false} {
		body := f.get(t, c, p+"/users?q="+url.QueryEscape(q)).body
		if got := strings.Contains(body, f.user.UserID.String()); got != found {
			t.Errorf("search %q finds the user: %v, want %v", q, got, found)
		}
	}
	events := f.get(t, c, p+"/events?type=user.created").body
	if !strings.Contains(events, f.eventID) || strings.Contains(events, "bank_account.") {
		t.Errorf("events of type user.created:\n%s", events)
	}
	future := time.Now().UTC().Add(time.Hour).Format("2006-01-02T15:04")
	if body := f.get(t, c, p+"/events?since="+future).body; strings.Contains(body, f.eventID) {
		t.Errorf("events since an hour from now show the user's event")
	}
	past := time.Now().UTC().Add(-time.Hour).Format("2006-01-02T15:04")
	if body := f.get(t, c, p+"/events?since="+past).body; !strings.Contains(body, f.eventID) {
		t.Errorf("events since an hour ago lack the user's event")
	}
}

// Under TLS the session cookie is Secure.
func TestLoginTLS(t *testing.T) {
	f := newFixture(t, payments.Production)
	srv := httptest.NewTLSServer(console.New(f.svc, console.Options{Token: token}))
	defer srv.Close()
	c := srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := c.Get(srv.URL + "/console/login?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if cookie := res.Header.Get("Set-Cookie"); res.StatusCode != http.StatusSeeOther || !strings.Contains(cookie, "; Secure") {
		t.Errorf("login under TLS: %d, cookie %q", res.StatusCode, cookie)
	}
}

func TestRatesPage(t *testing.T) {
	f := newFixture(t, payments.Production)
	ctx := context.Background()
	for _, in := range []payments.NewExchangeRate{
		{BaseCurrency: "USD", PayoutCurrency: "INR", ExchangeRate: "83.125", ApplyTime: "2025-01-01T00:00:00"},
		{BaseCurrency: "USD", PayoutCurrency: "INR", ExchangeRate: "99.875", ApplyTime: "2999-01-01T00:00:00"},
	} {
		if _, err := f.svc.SetExchangeRate(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	c := f.client(t)
	f.login(t, c)
	body := f.get(t, c, "/console/rates?currency=inr").body
	current, history, ok := strings.Cut(body, "<h2>History")
	if !ok {
		t.Fatalf("no history on the rates page:\n%s", body)
	}
	if !strings.Contains(current, "83.125") || strings.Contains(current, "99.875") {
		t.Errorf("the rates in force:\n%s", current)
	}
	if !strings.Contains(history, "83.125") || !strings.Contains(history, "99.875") || strings.Index(history, "99.875") > strings.Index(history, "83.125") {
		t.Errorf("the history, latest first:\n%s", history)
	}
}
