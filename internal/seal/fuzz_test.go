package seal_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/platform-payments/payments/internal/seal"
)

// Fuzz targets. Each has a seed corpus in testdata/fuzz/<name>, which go test runs as
// tests; to fuzz one:
//
//	go test -run '^$' -fuzz FuzzOpen -fuzztime 1m ./internal/seal
//
// FuzzOpen's seeds hold values the fixed test keys sealed (kat), so that the fuzzer
// starts from texts that open and mutates them.

// FuzzOpen: Open of any text never panics, fails with one of its three errors, and opens
// only a text that Seal writes for that value and aad, byte for byte: bound to aad and to
// its header, with one text per sealed value (no padding, no other spelling of the key id,
// no stray bits in the last base64 digit).
func FuzzOpen(f *testing.F) {
	ring := testRing(f)
	for _, tc := range kat {
		f.Add(tc.sealed, tc.aad)
	}
	f.Fuzz(func(t *testing.T, sealed, aad string) {
		plain, err := ring.Open(sealed, aad)
		if err != nil {
			if !errors.Is(err, seal.ErrNotSealed) && !errors.Is(err, seal.ErrUnsealable) && !errors.Is(err, seal.ErrMissingKey) {
				t.Fatalf("Open(%q, %q): error %v", sealed, aad, err)
			}
			if plain != nil {
				t.Fatalf("Open(%q, %q): %q and an error", sealed, aad, plain)
			}
			return
		}
		id, ok := seal.SealedBy(sealed)
		if !ok {
			t.Fatalf("Open(%q, %q) opened a value SealedBy says is not sealed", sealed, aad)
		}
		raw, err := base64.RawStdEncoding.DecodeString(sealed[len("v1:")+len(id)+1:])
		if err != nil || len(raw) < seal.NonceSize {
			t.Fatalf("Open(%q, %q) opened a value of no nonce", sealed, aad)
		}
		if again := seal.SealWithNonce(ring, id, raw[:seal.NonceSize], plain, aad); again != sealed {
			t.Fatalf("Open(%q, %q) = %q, but Seal writes that as %q", sealed, aad, plain, again)
		}
	})
}

// FuzzSealOpen: whatever the value and aad, Seal writes "v1:<key id>:" and base64, which
// opens to the value with that aad and no other, and does not open once any one bit of it
// is flipped.
func FuzzSealOpen(f *testing.F) {
	ring := testRing(f)
	f.Add([]byte("000123456789"), "bank_accounts.account_number:0198f0c2-0000-7000-8000-000000000001", "", uint16(0))
	f.Fuzz(func(t *testing.T, plain []byte, aad, otherAAD string, flip uint16) {
		sealed := ring.Seal(plain, aad)
		header := "v1:" + testKeyID + ":"
		body, ok := strings.CutPrefix(sealed, header)
		if !ok {
			t.Fatalf("sealed %q: want the header %s", sealed, header)
		}
		if raw, err := base64.RawStdEncoding.Strict().DecodeString(body); err != nil || len(raw) != seal.NonceSize+len(plain)+16 {
			t.Fatalf("sealed %q: want unpadded base64 of nonce, ciphertext and tag", sealed)
		}
		if got, err := ring.Open(sealed, aad); err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("Open(Seal(%q, %q)) = %q, %v", plain, aad, got, err)
		}
		if otherAAD != aad {
			if got, err := ring.Open(sealed, otherAAD); err == nil {
				t.Fatalf("sealed with aad %q, opened with %q to %q", aad, otherAAD, got)
			}
		}
		b := []byte(sealed)
		i := int(flip>>3) % len(b)
		b[i] ^= 1 << (flip & 7)
		if got, err := ring.Open(string(b), aad); err == nil {
			t.Fatalf("%q, a bit flipped in byte %d of %q, opened to %q", b, i, sealed, got)
		}
	})
}

// parseKeyError is every message ParseKey fails with: none quotes the text it was given.
var parseKeyError = regexp.MustCompile(`^a data key (is the base64 of 32 bytes(: not base64|, not [0-9]+)|of 32 zero bytes is not a key)$`)

// FuzzParseKey: ParseKey of any text never panics; it fails with one of its messages, or
// returns a key whose printed forms show its id and not the text, and which is the key
// WriteKeyFile's form of it parses to.
func FuzzParseKey(f *testing.F) {
	f.Add(testKeyText)
	f.Fuzz(func(t *testing.T, text string) {
		k, err := seal.ParseKey(text)
		if err != nil {
			if !parseKeyError.MatchString(err.Error()) {
				t.Fatalf("ParseKey(%q): error %q", text, err)
			}
			return
		}
		if id := k.ID(); len(id) != 16 || strings.Trim(id, "0123456789abcdef") != "" {
			t.Fatalf("ParseKey(%q): id %q, want 16 hex digits", text, id)
		}
		raw, _ := base64.StdEncoding.DecodeString(seal.KeyText(k))
		printed := fmt.Sprintf("%v %+v %#v %s %x %d", k, k, k, k, k, k)
		for _, form := range []string{strings.TrimSpace(text), seal.KeyText(k), hex.EncodeToString(raw), fmt.Sprint(raw[:4])} {
			if strings.Contains(printed, form) {
				t.Fatalf("ParseKey(%q) prints as %s", text, printed)
			}
		}
		if again, err := seal.ParseKey(seal.KeyText(k) + "\n"); err != nil || again.ID() != k.ID() {
			t.Fatalf("ParseKey(%q) = %v; its file form parses to %v, %v", text, k, again, err)
		}
	})
}
