package idem

import (
	"bytes"
	"strings"
	"testing"
)

func TestValidKey(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"", false},
		{"k", true},
		{"order-1234 retry", true},
		{strings.Repeat("k", MaxKeyLength), true},
		{strings.Repeat("k", MaxKeyLength+1), false},
		{"tab\there", false},
		{"del\x7f", false},
		{"é", false},
		{"~ !", true},
	} {
		if got := ValidKey(tc.key); got != tc.want {
			t.Errorf("ValidKey(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}

func TestFingerprint(t *testing.T) {
	fp := func(op string, in any) []byte {
		t.Helper()
		b, err := Fingerprint(op, in)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a := fp("CreateUser", map[string]string{"name": "Ada"})
	switch {
	case len(a) != 32:
		t.Errorf("fingerprint is %d bytes, want 32", len(a))
	case !bytes.Equal(a, fp("CreateUser", map[string]string{"name": "Ada"})):
		t.Error("the same call has two fingerprints")
	case bytes.Equal(a, fp("CreatePayee", map[string]string{"name": "Ada"})):
		t.Error("two operations with one input share a fingerprint")
	case bytes.Equal(a, fp("CreateUser", map[string]string{"name": "Bob"})):
		t.Error("two inputs share a fingerprint")
	}
	if _, err := Fingerprint("CreateUser", make(chan int)); err == nil {
		t.Error("an input JSON cannot encode has a fingerprint")
	}
}
