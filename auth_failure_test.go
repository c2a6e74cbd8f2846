package payments_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// Issue 30: AuthFailureOf tells the operator why authentication refused a request; the
// error the caller is answered from keeps its code, message and text.

func TestAuthFailureOf(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	now, _ := fixedClock(start)
	svc := mustOpen(t, payments.Options{Now: now})
	plain := mustPlatform(t, svc)
	stamped, err := svc.CreatePlatform(ctx, "Stamped", payments.Sandbox, payments.PlatformOptions{RequireTimestamp: true})
	if err != nil {
		t.Fatal(err)
	}
	live, err := svc.CreatePlatform(ctx, "Live", payments.Production)
	if err != nil {
		t.Fatal(err)
	}
	keyOf := func(p payments.PlatformCredentials, email string) payments.APIKey {
		u := mustUser(t, svc, p.PlatformID, "Ada", email)
		key, err := svc.CreateAPIKey(ctx, u.UserID.String())
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	key, liveKey := keyOf(plain, "ada@example.com"), keyOf(live, "ada@example.org")

	const method, target = "POST", "/api/platform/users/create"
	body := []byte(`{"name":"Ada Lovelace","email":"ada@example.com"}`)
	at := func(offset int64) string { return strconv.FormatInt(start.Unix()+offset, 10) }
	// request is a request of p signed in the form its ts calls for ("" : none).
	request := func(p payments.PlatformCredentials, ts string) payments.PlatformRequest {
		sig := payments.Sign(p.Secret, method, target, body)
		if ts != "" {
			sig = payments.SignTimestamped(p.Secret, method, target, body, ts)
		}
		return payments.PlatformRequest{PlatformID: p.PlatformID.String(), Signature: sig, Timestamp: ts,
			Method: method, Target: target, Body: body}
	}
	with := func(r payments.PlatformRequest, change func(r *payments.PlatformRequest)) payments.PlatformRequest {
		change(&r)
		return r
	}
	const invalid = "Invalid credentials."

	for _, tc := range []struct {
		name    string
		req     *payments.PlatformRequest // nil: the API key and secret
		key     string
		secret  string
		reason  payments.AuthFailure
		message string
	}{
		{name: "MissingPlatformID", req: ptr(with(request(plain, ""), func(r *payments.PlatformRequest) { r.PlatformID = "" })),
			reason: payments.AuthFailureMissingPlatformID, message: "Missing header X-Platform-ID."},
		{name: "MissingSignature", req: ptr(with(request(plain, ""), func(r *payments.PlatformRequest) { r.Signature = "" })),
			reason: payments.AuthFailureMissingSignature, message: "Missing header X-Signature."},
		{name: "MalformedPlatformID", req: ptr(with(request(plain, ""), func(r *payments.PlatformRequest) { r.PlatformID = "platform-1" })),
			reason: payments.AuthFailureMalformedPlatformID, message: invalid},
		{name: "MalformedSignatureNotHex", req: ptr(with(request(plain, ""), func(r *payments.PlatformRequest) { r.Signature = "zz" })),
			reason: payments.AuthFailureMalformedSignature, message: invalid},
		{name: "MalformedSignatureLength", req: ptr(with(request(plain, ""), func(r *payments.PlatformRequest) { r.Signature += "00" })),
			reason: payments.AuthFailureMalformedSignature, message: invalid},
		// A signature of the wrong length for an unknown platform: the signature's fault
		// is named first, as for hex that does not decode.
		{name: "MalformedSignatureUnknownPlatform", req: ptr(with(request(plain, ""), func(r *payments.PlatformRequest) {
			r.PlatformID, r.Signature = uuid.NewString(), r.Signature[:62]
		})), reason: payments.AuthFailureMalformedSignature, message: invalid},
		{name: "UnknownPlatform", req: ptr(with(request(plain, ""), func(r *payments.PlatformRequest) { r.PlatformID = uuid.NewString() })),
			reason: payments.AuthFailureUnknownPlatform, message: invalid},
		{name: "WrongEnvironment", req: ptr(request(live, "")), reason: payments.AuthFailureWrongEnvironment, message: invalid},
		{name: "WrongEnvironmentBadSignature", req: ptr(with(request(live, ""), func(r *payments.PlatformRequest) {
			r.Signature = payments.Sign(plain.Secret, method, target, body)
		})), reason: payments.AuthFailureWrongEnvironment, message: invalid},
		{name: "TimestampNotSigned", req: ptr(with(request(stamped, ""), func(r *payments.PlatformRequest) { r.Timestamp = at(0) })),
			reason: payments.AuthFailureTimestampNotSigned, message: invalid},
		{name: "TimestampNotRequired", req: ptr(request(plain, at(0))), reason: payments.AuthFailureTimestampNotRequired, message: invalid},
		{name: "BadSignature", req: ptr(with(request(plain, ""), func(r *payments.PlatformRequest) {
			r.Signature = payments.Sign(stamped.Secret, method, target, body)
		})), reason: payments.AuthFailureBadSignature, message: invalid},
		{name: "BadSignatureOtherTarget", req: ptr(with(request(plain, ""), func(r *payments.PlatformRequest) { r.Target += "?a=1" })),
			reason: payments.AuthFailureBadSignature, message: invalid},
		{name: "BadSignatureStampedOtherTimestamp", req: ptr(with(request(stamped, at(0)), func(r *payments.PlatformRequest) { r.Timestamp = at(1) })),
			reason: payments.AuthFailureBadSignature, message: invalid},
		// Signed with a timestamp it does not send: nothing tells which timestamp.
		{name: "BadSignatureStampedNoTimestamp", req: ptr(with(request(stamped, at(0)), func(r *payments.PlatformRequest) { r.Timestamp = "" })),
			reason: payments.AuthFailureBadSignature, message: invalid},
		{name: "MissingTimestamp", req: ptr(request(stamped, "")), reason: payments.AuthFailureMissingTimestamp, message: "Missing header X-Timestamp."},
		{name: "MalformedTimestamp", req: ptr(request(stamped, "+"+at(0))), reason: payments.AuthFailureMalformedTimestamp,
			message: "Malformed header X-Timestamp: want Unix seconds."},
		{name: "StaleTimestamp", req: ptr(request(stamped, at(301))), reason: payments.AuthFailureStaleTimestamp,
			message: "Request timestamp outside the allowed window."},

		{name: "MissingAPIKey", secret: key.APISecret, reason: payments.AuthFailureMissingAPIKey, message: "Missing header X-Api-Key."},
		{name: "MissingAPISecret", key: key.APIKey.String(), reason: payments.AuthFailureMissingAPISecret, message: "Missing header X-Api-Secret."},
		{name: "MalformedAPIKey", key: "key-1", secret: key.APISecret, reason: payments.AuthFailureMalformedAPIKey, message: invalid},
		{name: "UnknownAPIKey", key: uuid.NewString(), secret: key.APISecret, reason: payments.AuthFailureUnknownAPIKey, message: invalid},
		{name: "WrongEnvironmentAPIKey", key: liveKey.APIKey.String(), secret: liveKey.APISecret,
			reason: payments.AuthFailureWrongEnvironment, message: invalid},
		{name: "BadAPISecret", key: key.APIKey.String(), secret: liveKey.APISecret, reason: payments.AuthFailureBadAPISecret, message: invalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.req != nil {
				_, err = svc.AuthenticatePlatformRequest(ctx, *tc.req)
			} else {
				_, err = svc.AuthenticateAPIKey(ctx, tc.key, tc.secret)
			}
			e := errorOf(t, err, payments.CodeUnauthorized)
			if e.Message != tc.message {
				t.Errorf("message %q, want %q", e.Message, tc.message)
			}
			if got, want := err.Error(), "payments: unauthorized: "+tc.message; got != want {
				t.Errorf("Error() = %q, want %q", got, want)
			}
			if got := payments.AuthFailureOf(err); got != tc.reason {
				t.Errorf("AuthFailureOf = %q, want %q", got, tc.reason)
			}
			if got := payments.AuthFailureOf(fmt.Errorf("serving: %w", err)); got != tc.reason {
				t.Errorf("AuthFailureOf of the wrapped error = %q, want %q", got, tc.reason)
			}
		})
	}

	// The success paths, and errors of other kinds, have no reason.
	for name, err := range map[string]error{
		"nil":          nil,
		"other":        errors.New("payments: something else"),
		"unauthorized": payments.Errorf(payments.CodeUnauthorized, "Invalid credentials."),
	} {
		if got := payments.AuthFailureOf(err); got != "" {
			t.Errorf("AuthFailureOf(%s) = %q, want none", name, got)
		}
	}
	if _, err := svc.AuthenticatePlatformRequest(ctx, request(stamped, at(0))); err != nil {
		t.Errorf("a right request: %v", err)
	}
}
