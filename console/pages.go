package console

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/overview"
)

// Page sizes: platforms, users and events a page (the API's largest events page).
const (
	platformsPerPage = 50
	usersPerPage     = 20
	eventsPerPage    = 50
	userEventsShown  = 20
)

// pageNumber reads ?page= (1 when left out); a page that is no positive number is a 422.
func pageNumber(r *http.Request) (int, error) {
	s := r.URL.Query().Get("page")
	if s == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 1_000_000 {
		return 0, badRequest("The page must be a number from 1.")
	}
	return n, nil
}

// pager is a page's links to the pages before and after it.
type pager struct {
	Page       int
	Prev, Next template.URL
}

// platformsView is the platforms page.
type platformsView struct {
	Platforms []platformRow
	Pager     pager
}

type platformRow struct {
	overview.Platform
	Endpoints []endpointRow
}

// platformsPage lists the platforms, with their users and endpoints.
func (c *Console) platformsPage(r *http.Request, v *view) (string, any, error) {
	n, err := pageNumber(r)
	if err != nil {
		return "", nil, err
	}
	ctx := r.Context()
	list, err := c.reader.Platforms(ctx, (n-1)*platformsPerPage, platformsPerPage+1)
	if err != nil {
		return "", nil, err
	}
	out := platformsView{Pager: pages2(n, len(list) > platformsPerPage, nil)}
	list = list[:min(len(list), platformsPerPage)]
	for _, p := range list {
		row := platformRow{Platform: p}
		if row.Endpoints, err = c.endpointRows(ctx, p.ID, false); err != nil {
			return "", nil, err
		}
		out.Platforms = append(out.Platforms, row)
	}
	v.Title = "Platforms"
	return "platforms", out, nil
}

// pages2 returns the links of page n's pager: to n-1 when n > 1, to n+1 when more.
func pages2(n int, more bool, keep []string) pager {
	p := pager{Page: n}
	link := func(page int) template.URL {
		kv := append([]string{}, keep...)
		if page > 1 {
			kv = append(kv, "page", strconv.Itoa(page))
		}
		u := funcs["query"].(func(...string) template.URL)(kv...)
		if u == "" {
			return "?"
		}
		return u
	}
	if n > 1 {
		p.Prev = link(n - 1)
	}
	if more {
		p.Next = link(n + 1)
	}
	return p
}

// platform reads the page's {platform} and sets the view's navigation to it.
func (c *Console) platform(r *http.Request, v *view) (uuid.UUID, error) {
	id, err := platformID(r)
	if err != nil {
		return id, err
	}
	p, err := c.reader.Platform(r.Context(), id.String())
	if errors.Is(err, sql.ErrNoRows) {
		return id, notFound("platform")
	}
	if err != nil {
		return id, err
	}
	v.Platform = &platformRef{ID: p.ID, Name: p.Name, Users: p.Users}
	return id, nil
}

// usersView is a platform's users page.
type usersView struct {
	Query    string
	Users    []userRow
	Total    int64 // -1 for a search
	Searched int64 // a search with more to read: it has read up to this pw_id
	Pager    pager
}

type userRow struct {
	PwID      int64
	ID        string
	Name      string
	Email     *string
	CreatedAt time.Time
}

// usersPage lists a platform's users a page at a time as List Users pages them, or those
// a search for an email or a name finds.
func (c *Console) usersPage(r *http.Request, v *view) (string, any, error) {
	pid, err := c.platform(r, v)
	if err != nil {
		return "", nil, err
	}
	n, err := pageNumber(r)
	if err != nil {
		return "", nil, err
	}
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if len(q) > 200 {
		return "", nil, badRequest("The search is too long: at most 200 characters.")
	}
	out := usersView{Query: q}
	v.Title = "Users of " + v.Platform.Name
	if q == "" {
		page, err := c.svc.ListUsers(r.Context(), pid, payments.ListUsersParams{RowsPerPage: usersPerPage, PageNo: n})
		if err != nil {
			return "", nil, err
		}
		for _, u := range page.Records {
			out.Users = append(out.Users, userRow{PwID: u.PwID, ID: u.UserID.String(), Name: u.Name, Email: u.Email, CreatedAt: u.CreatedAt})
		}
		out.Total = page.TotalRecords
		out.Pager = pages2(n, int64(n*usersPerPage) < page.TotalRecords, nil)
		return "users", out, nil
	}
	// A search pages by pw_id: ?after= is the last pw_id of the page before.
	var after int64
	if s := r.URL.Query().Get("after"); s != "" {
		if after, err = strconv.ParseInt(s, 10, 64); err != nil || after < 0 {
			return "", nil, badRequest("after must be a user's number.")
		}
	}
	found, err := c.reader.SearchUsers(r.Context(), pid.String(), q, after, v.Platform.Users, usersPerPage)
	if err != nil {
		return "", nil, err
	}
	for _, u := range found.Users {
		out.Users = append(out.Users, userRow{PwID: u.PwID, ID: u.ID, Name: u.Name, Email: u.Email, CreatedAt: u.CreatedAt})
	}
	out.Total, out.Searched = -1, after
	if found.Next > 0 {
		out.Searched = found.Next
		out.Pager.Next = funcs["query"].(func(...string) template.URL)("q", q, "after", strconv.FormatInt(found.Next, 10))
	}
	return "users", out, nil
}

// userView is a user's page.
type userView struct {
	User     payments.User
	Holdings overview.Holdings
	Payees   []payeeRow
	Events   []overview.EventRef
	// EventsSince is the events page's since for the user's creation; EventWindow how
	// many of the platform's latest events Events are among.
	EventsSince string
	EventWindow int
}

type payeeRow struct {
	ID        string
	Name      string
	Email     *string
	CreatedAt string
	Banks     []bankRow
	Addresses []payments.PayeeAddress
}

type bankRow struct {
	ID, Country, Type string
	NickName          *string
	IdentifierType    *string
	Deleted           bool
}

// userPage shows a user: profile (Get User), wallet and settings, bank accounts (their
// numbers masked as Get Bank Account masks them), cards, payees with their banks and addresses, and the latest events
// that name the user.
func (c *Console) userPage(r *http.Request, v *view) (string, any, error) {
	pid, err := c.platform(r, v)
	if err != nil {
		return "", nil, err
	}
	uid, err := uuid.Parse(r.PathValue("user"))
	if err != nil {
		return "", nil, notFound("user")
	}
	ctx := r.Context()
	u, err := c.svc.GetUser(ctx, pid, uid.String())
	if err != nil {
		return "", nil, err
	}
	out := userView{User: u, EventsSince: u.CreatedAt.UTC().Format(sinceLayout), EventWindow: overview.EventWindow}
	if out.Holdings, err = c.reader.UserHoldings(ctx, pid.String(), uid.String()); err != nil {
		return "", nil, err
	}
	banks := map[string][]bankRow{}
	for _, b := range out.Holdings.PayeeBanks {
		banks[b.PayeeID] = append(banks[b.PayeeID], bankRow{ID: b.ID, Country: b.Country, Type: b.BankAccType,
			NickName: b.BankNickName, IdentifierType: b.IdentifierType, Deleted: b.DeletedAt != nil})
	}
	for _, p := range out.Holdings.Payees {
		addrs, err := c.svc.ListPayeeAddresses(ctx, pid, uid.String(), p.ID)
		if err != nil {
			return "", nil, err
		}
		out.Payees = append(out.Payees, payeeRow{ID: p.ID, Name: p.Name, Email: p.Email, CreatedAt: p.CreatedAt,
			Banks: banks[p.ID], Addresses: addrs})
	}
	if out.Events, err = c.reader.UserEvents(ctx, pid.String(), uid.String(), u.CreatedAt, userEventsShown); err != nil {
		return "", nil, err
	}
	v.Title = u.Name
	return "user", out, nil
}

// eventsView is a platform's events page.
type eventsView struct {
	Type, Since string
	Events      []payments.Event
	Next        template.URL
}

// sinceLayout is how the events page's time filter is written (an HTML datetime-local, UTC).
const sinceLayout = "2006-01-02T15:04"

// eventsPage lists a platform's events oldest first, as List Events pages them, of one
// type and from a time when asked.
func (c *Console) eventsPage(r *http.Request, v *view) (string, any, error) {
	pid, err := c.platform(r, v)
	if err != nil {
		return "", nil, err
	}
	qs := r.URL.Query()
	out := eventsView{Type: qs.Get("type"), Since: qs.Get("since")}
	after := qs.Get("after")
	if after == "" && out.Since != "" {
		since, err := time.Parse(sinceLayout, out.Since)
		if err != nil {
			return "", nil, badRequest("since must be a time as 2006-01-02T15:04 (UTC).")
		}
		after = overview.CursorAt(since)
	}
	page, err := c.svc.ListEvents(r.Context(), pid, payments.EventQuery{After: after, Type: out.Type, Limit: strconv.Itoa(eventsPerPage)})
	if err != nil {
		return "", nil, err
	}
	out.Events = page.Events
	if page.HasMore && len(page.Events) > 0 {
		out.Next = funcs["query"].(func(...string) template.URL)("type", out.Type, "since", out.Since,
			"after", page.Events[len(page.Events)-1].ID.String())
	}
	v.Title = "Events of " + v.Platform.Name
	return "events", out, nil
}

// eventView is an event's page.
type eventView struct {
	Event     payments.Event
	Payload   string
	Endpoints []endpointAttempts
	Enabled   []payments.WebhookEndpoint
}

// endpointAttempts are the attempts at one endpoint.
type endpointAttempts struct {
	EndpointID string
	URL        string
	Attempts   []payments.DeliveryAttempt
}

// eventPage shows an event: its payload and every attempt to deliver it, by endpoint.
func (c *Console) eventPage(r *http.Request, v *view) (string, any, error) {
	pid, err := c.platform(r, v)
	if err != nil {
		return "", nil, err
	}
	ctx := r.Context()
	e, err := c.svc.GetEvent(ctx, pid, r.PathValue("event"))
	if err != nil {
		return "", nil, err
	}
	payload, err := json.MarshalIndent(e.Event, "", "  ")
	if err != nil {
		return "", nil, err
	}
	endpoints, err := c.svc.ListWebhookEndpoints(ctx, pid)
	if err != nil {
		return "", nil, err
	}
	urls := map[uuid.UUID]string{}
	out := eventView{Event: e.Event, Payload: string(payload)}
	for _, ep := range endpoints {
		urls[ep.ID] = ep.URL
		if ep.Status == payments.EndpointEnabled {
			out.Enabled = append(out.Enabled, ep)
		}
	}
	index := map[uuid.UUID]int{}
	for _, a := range e.Attempts {
		i, ok := index[a.EndpointID]
		if !ok {
			i = len(out.Endpoints)
			index[a.EndpointID] = i
			url := urls[a.EndpointID]
			if url == "" {
				url = "(deleted endpoint)"
			}
			out.Endpoints = append(out.Endpoints, endpointAttempts{EndpointID: a.EndpointID.String(), URL: url})
		}
		out.Endpoints[i].Attempts = append(out.Endpoints[i].Attempts, a)
	}
	v.Title = "Event " + e.ID.String()
	return "event", out, nil
}

// endpointRow is an endpoint with its health.
type endpointRow struct {
	payments.WebhookEndpoint
	Health      overview.Health
	Attempts    int
	Succeeded   int
	SuccessRate string
	Chart       template.HTML
}

// healthWindow is how far back an endpoint's health and chart look.
const healthWindow = 24 * time.Hour

// endpointRows returns the platform's endpoints with their health (and charts when asked).
func (c *Console) endpointRows(ctx context.Context, platformID string, charts bool) ([]endpointRow, error) {
	pid, err := uuid.Parse(platformID)
	if err != nil {
		return nil, err
	}
	list, err := c.svc.ListWebhookEndpoints(ctx, pid)
	if err != nil {
		return nil, err
	}
	out := make([]endpointRow, 0, len(list))
	for _, ep := range list {
		row, err := c.endpointRow(ctx, platformID, ep, charts)
		if err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, nil
}

// endpointRow returns ep with its health over the last healthWindow.
func (c *Console) endpointRow(ctx context.Context, platformID string, ep payments.WebhookEndpoint, chart bool) (endpointRow, error) {
	now := c.now()
	h, err := c.reader.EndpointHealth(ctx, platformID, ep.ID.String(), now.Add(-healthWindow))
	if err != nil {
		return endpointRow{}, err
	}
	row := endpointRow{WebhookEndpoint: ep, Health: h, Attempts: len(h.Attempts), SuccessRate: "—"}
	for _, a := range h.Attempts {
		if a.OK() {
			row.Succeeded++
		}
	}
	if row.Attempts > 0 {
		row.SuccessRate = strconv.FormatFloat(100*float64(row.Succeeded)/float64(row.Attempts), 'f', 1, 64) + "%"
	}
	if chart {
		row.Chart = attemptsChart(h.Attempts, now)
	}
	return row, nil
}

// endpointsPage lists a platform's endpoints with their health.
func (c *Console) endpointsPage(r *http.Request, v *view) (string, any, error) {
	pid, err := c.platform(r, v)
	if err != nil {
		return "", nil, err
	}
	rows, err := c.endpointRows(r.Context(), pid.String(), false)
	if err != nil {
		return "", nil, err
	}
	v.Title = "Webhook endpoints of " + v.Platform.Name
	return "endpoints", rows, nil
}

// endpointPage shows an endpoint: its health and the chart of its attempts by hour.
func (c *Console) endpointPage(r *http.Request, v *view) (string, any, error) {
	pid, err := c.platform(r, v)
	if err != nil {
		return "", nil, err
	}
	rows, err := c.endpointRows(r.Context(), pid.String(), false)
	if err != nil {
		return "", nil, err
	}
	for _, row := range rows {
		if row.ID.String() == r.PathValue("endpoint") {
			row.Chart = attemptsChart(row.Health.Attempts, c.now())
			v.Title = "Endpoint " + row.URL
			return "endpoint", row, nil
		}
	}
	return "", nil, notFound("endpoint")
}

// ratesView is the exchange rates page.
type ratesView struct {
	Currency string
	Rates    []payments.ExchangeRate
	History  []overview.Rate
}

// rateHistoryShown is how many entries of the rates history the page shows.
const rateHistoryShown = 100

// ratesPage shows the rates in force for a payout currency (USD unless asked), and the
// latest entries of its history.
func (c *Console) ratesPage(r *http.Request, v *view) (string, any, error) {
	out := ratesView{Currency: strings.ToUpper(strings.TrimSpace(r.URL.Query().Get("currency")))}
	if out.Currency == "" {
		out.Currency = "USD"
	}
	rates, err := c.svc.ExchangeRates(r.Context(), out.Currency)
	if err != nil {
		return "", nil, err
	}
	out.Rates = rates
	if out.History, err = c.reader.RateHistory(r.Context(), out.Currency, rateHistoryShown); err != nil {
		return "", nil, err
	}
	v.Title = "Exchange rates"
	return "rates", out, nil
}

// rulesView is the payee rules page.
type rulesView struct {
	Country, Currency string
	Rules             *payments.PayeeRules
	Countries         []overview.RuleCountry
}

// rulesPage shows the payee rules of a country and payout currency, or, until one is
// asked, the countries and currencies there are rules for.
func (c *Console) rulesPage(r *http.Request, v *view) (string, any, error) {
	qs := r.URL.Query()
	out := rulesView{Country: strings.ToUpper(strings.TrimSpace(qs.Get("country"))), Currency: strings.ToUpper(strings.TrimSpace(qs.Get("currency")))}
	v.Title = "Payee rules"
	if out.Country == "" {
		countries, err := c.reader.RuleCountries(r.Context())
		out.Countries = countries
		return "rules", out, err
	}
	rules, err := c.svc.GetPayeeRules(r.Context(), out.Country, out.Currency)
	if err != nil {
		return "", nil, err
	}
	out.Rules = &rules
	return "rules", out, nil
}
