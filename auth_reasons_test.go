package payments

import (
	"slices"
	"testing"

	"github.com/platform-payments/payments/internal/credentials"
)

// The failures package credentials reports are exactly the AuthFailure constants, in their
// order of precedence: each has its refusal, and no constant is one the checks never give.
func TestAuthFailuresAreTheConstants(t *testing.T) {
	constants := []AuthFailure{
		AuthFailureMissingPlatformID, AuthFailureMissingSignature, AuthFailureMalformedPlatformID,
		AuthFailureMalformedSignature, AuthFailureUnknownPlatform, AuthFailureWrongEnvironment,
		AuthFailureTimestampNotSigned, AuthFailureTimestampNotRequired, AuthFailureBadSignature,
		AuthFailureMissingTimestamp, AuthFailureMalformedTimestamp, AuthFailureStaleTimestamp,
		AuthFailureMissingAPIKey, AuthFailureMissingAPISecret, AuthFailureMalformedAPIKey,
		AuthFailureUnknownAPIKey, AuthFailureBadAPISecret,
	}
	var checked []AuthFailure
	for _, f := range credentials.Failures {
		checked = append(checked, AuthFailure(f))
	}
	if !slices.Equal(checked, constants) {
		t.Fatalf("credentials.Failures = %v, want the AuthFailure constants %v", checked, constants)
	}
	for _, reason := range constants {
		if r := refuse(reason).(*authRefusal); r.reason != reason || r != refusals[reason] {
			t.Errorf("refuse(%s) = %+v, want the refusal made once for it", reason, r)
		}
	}
}
