package overview

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/pgtest"
)

// The reads on a store of seven users, on either engine: searches (by email, by a part of
// a name, a window at a time) and a user's events (in a window of the latest).
func TestReads(t *testing.T) {
	ctx := context.Background()
	dsn, keyFile := pgtest.NewStore(t)
	svc, err := payments.Open(ctx, dsn, payments.Options{KeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	p, err := svc.CreatePlatform(ctx, "Seven", payments.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"Ada Lovelace", "Alan Turing", "Grace Hopper", "Ada Yonath", "Edsger Dijkstra", "100% Real_Name", "Barbara Liskov"}
	ids := map[string]string{}
	for _, n := range names {
		email := strings.ToLower(strings.Fields(n)[1]) + "@example.com"
		u, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: n, Email: &email})
		if err != nil {
			t.Fatal(err)
		}
		ids[n] = u.UserID.String()
	}
	r := New(svc.Outbox(), svc.DataKeys().Ring)
	r.searchWindow = 3
	pid := p.PlatformID.String()

	tests := []struct {
		term  string
		after int64
		want  string // names found, then -> and the next pw_id
	}{
		{"ada", 0, "Ada Lovelace -> 3"},               // window 1..3
		{"ada", 3, "Ada Yonath -> 6"},                 // window 4..6
		{"ada", 6, " -> 0"},                           // window 7..9, the last
		{"a", 0, "Ada Lovelace,Alan Turing -> 2"},     // a full page first
		{"a", 2, "Grace Hopper,Ada Yonath -> 4"},      // window 3..5: three found, a page of two
		{"TURING@EXAMPLE.COM", 0, "Alan Turing -> 0"}, // the email key, any case
		{"turing@example.com", 1, " -> 0"},            // one user at most: no page after
		{"example.com", 0, " -> 3"},                   // no name has it
		{"%", 0, " -> 3"},                             // a wildcard of LIKE is a character here
		{"% real_", 3, "100% Real_Name -> 6"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%d", tc.term, tc.after), func(t *testing.T) {
			page, err := r.SearchUsers(ctx, pid, tc.term, tc.after, int64(len(names)), 2)
			if err != nil {
				t.Fatal(err)
			}
			var found []string
			for _, u := range page.Users {
				found = append(found, u.Name)
			}
			if got := fmt.Sprintf("%s -> %d", strings.Join(found, ","), page.Next); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}

	// The events that name a user, among the latest: each user has its user.created.
	if err := svc.VerifyUser(ctx, ids["Ada Lovelace"]); err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-time.Hour)
	events, err := r.UserEvents(ctx, pid, ids["Ada Lovelace"], since, 10)
	if err != nil || len(events) != 2 || events[0].Type != "user.verification.succeeded" || events[1].Type != "user.created" {
		t.Errorf("Ada's events: %+v, %v", events, err)
	}
	r.eventWindow = 3 // the verification and the last two users' user.created
	if events, err := r.UserEvents(ctx, pid, ids["Ada Lovelace"], since, 10); err != nil || len(events) != 1 {
		t.Errorf("Ada's events among the latest 3: %+v, %v", events, err)
	}
	if events, err := r.UserEvents(ctx, pid, ids["Barbara Liskov"], since, 10); err != nil || len(events) != 1 {
		t.Errorf("Barbara's events among the latest 3: %+v, %v", events, err)
	}
	r.eventWindow = EventWindow
	if events, err := r.UserEvents(ctx, pid, ids["Ada Lovelace"], time.Now().Add(time.Hour), 10); err != nil || len(events) != 0 {
		t.Errorf("Ada's events from an hour ahead: %+v, %v", events, err)
	}

	// Holdings of a user of another platform: none.
	other, err := svc.CreatePlatform(ctx, "Other", payments.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.UserHoldings(ctx, other.PlatformID.String(), ids["Ada Lovelace"]); err == nil {
		t.Error("another platform's user: holdings")
	}
	h, err := r.UserHoldings(ctx, pid, ids["Ada Lovelace"])
	if err != nil || h.Verified == nil || h.Wallet.Currency == "" || h.Settings.Language == "" {
		t.Errorf("Ada's holdings: %+v, %v", h, err)
	}
	platforms, err := r.Platforms(ctx, 1, 10)
	if err != nil || len(platforms) != 1 || platforms[0].Name != "Other" {
		t.Errorf("platforms after the first: %+v, %v", platforms, err)
	}
}
