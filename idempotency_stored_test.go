package payments_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/httpserver"
)

// A record stored by an earlier version, whose HTTP layer stored the response it rendered
// with the outcome (status and body), replays as it was stored: over HTTP the stored
// bytes, marked replayed, and not rendered again; from Go the outcome, with the stored
// response in Idempotency.Response.
func TestIdempotencyStoredResponse(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	now, set := fixedClock(start)
	svc := mustOpen(t, payments.Options{Now: now})
	p := mustPlatform(t, svc)
	u := mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")
	h := httpserver.New(svc, nil)
	send := func(method, target, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, target, bytes.NewReader([]byte(body)))
		req.Header.Set(payments.HeaderPlatformID, p.PlatformID.String())
		req.Header.Set(payments.HeaderSignature, payments.Sign(p.Secret, method, target, []byte(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "old")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for _, tt := range []struct {
		name, op, method, target, body string
		status                         int
		// call is the Go call of the same request, under idem.
		call func(idem *payments.Idempotency) error
	}{
		{"Create User", "CreateUser", "POST", "/api/platform/users/create", `{"name":"Bob","email":"bob@example.com"}`, 200,
			func(idem *payments.Idempotency) error {
				got, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: "Bob", Email: ptr("bob@example.com")}, payments.WithKey(idem))
				if err == nil && got.Name != "Bob" {
					t.Errorf("Go replay: %+v", got)
				}
				return err
			}},
		{"Delete Card", "DeleteCard", "DELETE", "/api/platform/card/delete/" + u.UserID.String(), `{"card_id":"7f0c2a4e-1b7d-4c61-9a53-0d8e7f6b5a41"}`, 404,
			func(idem *payments.Idempotency) error {
				_, err := svc.DeleteCard(ctx, p.PlatformID, u.UserID.String(), payments.CardDeletion{CardID: "7f0c2a4e-1b7d-4c61-9a53-0d8e7f6b5a41"}, payments.WithKey(idem))
				if payments.ErrorCode(err) != payments.CodeNotFound {
					t.Errorf("Go replay: %v, want the refusal stored", err)
				}
				return nil
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			set(start)
			first := send(tt.method, tt.target, tt.body)
			if first.Code != tt.status {
				t.Fatalf("first: %d %s", first.Code, first.Body)
			}
			set(start.Add(time.Hour))
			// Stored as that version stored it (its rendering was this version's first
			// answer, byte for byte), then with a body this version would not render.
			for _, stored := range [][]byte{first.Body.Bytes(), bytes.Replace(first.Body.Bytes(), []byte(`"message":"`), []byte(`"message":"Stored: `), 1)} {
				if err := svc.StoreRendered(ctx, p.PlatformID, tt.op, "old", first.Code, stored); err != nil {
					t.Fatal(err)
				}
				again := send(tt.method, tt.target, tt.body)
				if again.Code != first.Code || !bytes.Equal(again.Body.Bytes(), stored) || again.Header().Get("Idempotent-Replayed") != "true" {
					t.Errorf("replay of a stored response: %d %s, replayed %q; want %d %s replayed", again.Code, again.Body,
						again.Header().Get("Idempotent-Replayed"), first.Code, stored)
				}
				sum := sha256.Sum256([]byte(tt.method + " " + tt.target + "\n" + tt.body)) // the request's fingerprint, as httpserver takes it
				idem := &payments.Idempotency{Key: "old", Fingerprint: sum[:]}
				if err := tt.call(idem); err != nil {
					t.Errorf("Go replay: %v", err)
				}
				if r := idem.Response; !idem.Replayed || !idem.At.Equal(start) || r == nil || r.Status != first.Code || !bytes.Equal(r.Body, stored) {
					t.Errorf("Go replay: replayed %v at %v, response %+v; want the stored response of %v", idem.Replayed, idem.At, r, start)
				}
			}
		})
	}
}
