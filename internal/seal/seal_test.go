package seal_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"testing/cryptotest"

	"github.com/platform-payments/payments/internal/seal"
)

// Two fixed keys: bytes 0 to 31, and 255 down to 224. Their ids and what they sealed are
// known answers (kat below), taken from the sealing code before it moved to this package:
// stored values depend on every byte of them.
const (
	testKeyText  = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	testKeyID    = "903b8066b5745fd8"
	olderKeyText = "//79/Pv6+fj39vX08/Lx8O/u7ezr6uno5+bl5OPi4eA="
	olderKeyID   = "8bf68c50ed99dd4e"
)

func mustKey(tb testing.TB, text string) seal.Key {
	tb.Helper()
	k, err := seal.ParseKey(text)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

func mustRing(tb testing.TB, keys ...seal.Key) *seal.Keyring {
	tb.Helper()
	r, err := seal.NewKeyring(keys)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// testRing is the ring of the fixed keys, testKey the newest.
func testRing(tb testing.TB) *seal.Keyring {
	return mustRing(tb, mustKey(tb, testKeyText), mustKey(tb, olderKeyText))
}

// kat are values sealed before the move, with crypto/rand seeded by SetGlobalRandom(t, 1)
// (one after the other, in this order).
var kat = []struct {
	name, keyID, plain, aad, sealed string
}{
	{"account-number", testKeyID, "000123456789", "bank_accounts.account_number:0198f0c2-0000-7000-8000-000000000001",
		"v1:903b8066b5745fd8:auZ4P0+96RtuuItzImguMtOgyx0MXE0nWgrWOXQtGYuFCPRZ4MAbHg"},
	{"empty", testKeyID, "", "platforms.secret:x",
		"v1:903b8066b5745fd8:pI7SR9vliC4leWg0t20eJcTM/0gnoBBI8mnbSA"},
	{"older-key-check", olderKeyID, "payments data key check v1", "data_keys.key_check:" + olderKeyID,
		"v1:8bf68c50ed99dd4e:MsG/xSVFSt0M2HJ0jcWyC8NvWb++h2nycvY89f952Nz+pMIG8egGTK4Rhc31qkBGWE3vyYWu"},
}

// TestKnownAnswers: the key ids and the sealed values are those of before, byte for byte.
func TestKnownAnswers(t *testing.T) {
	for _, tc := range []struct{ text, id string }{{testKeyText, testKeyID}, {olderKeyText, olderKeyID}} {
		if got := mustKey(t, tc.text).ID(); got != tc.id {
			t.Errorf("key %s: id %s, want %s", tc.text, got, tc.id)
		}
	}
	ring := testRing(t)
	for _, tc := range kat {
		t.Run("Open/"+tc.name, func(t *testing.T) {
			if got, err := ring.Open(tc.sealed, tc.aad); err != nil || string(got) != tc.plain {
				t.Errorf("open = %q, %v; want %q", got, err, tc.plain)
			}
		})
	}
	// Seal's output, given the same random bytes. (Go does not promise that its crypto
	// reads randomness the same way in every release; this package reads the nonce itself.)
	t.Run("Seal", func(t *testing.T) {
		cryptotest.SetGlobalRandom(t, 1)
		older := mustRing(t, mustKey(t, olderKeyText))
		for _, tc := range kat {
			r := ring
			if tc.keyID == olderKeyID {
				r = older
			}
			if got := r.Seal([]byte(tc.plain), tc.aad); got != tc.sealed {
				t.Errorf("%s: sealed\n %s\nwant\n %s", tc.name, got, tc.sealed)
			}
		}
	})
}

func TestSealOpen(t *testing.T) {
	older, newer, stranger := mustKey(t, olderKeyText), mustKey(t, testKeyText), seal.NewKey()
	ring := mustRing(t, newer, older)
	olderRing, strangerRing := mustRing(t, older), mustRing(t, stranger)
	const number, aad = "000123456789", "bank_accounts.account_number:0198f0c2-0000-7000-8000-000000000001"
	sealed := ring.Seal([]byte(number), aad)

	t.Run("OK", func(t *testing.T) {
		if !strings.HasPrefix(sealed, "v1:"+newer.ID()+":") {
			t.Errorf("sealed %q: want it under the newest key %s", sealed, newer.ID())
		}
		if strings.Contains(sealed, number) || strings.Contains(sealed, base64.RawStdEncoding.EncodeToString([]byte(number))) {
			t.Errorf("sealed %q shows the number", sealed)
		}
		if got, err := ring.Open(sealed, aad); err != nil || string(got) != number {
			t.Errorf("open = %q, %v", got, err)
		}
		if id, ok := seal.SealedBy(sealed); !ok || id != newer.ID() {
			t.Errorf("key id %q, %v", id, ok)
		}
	})
	t.Run("OKNewNonceEachTime", func(t *testing.T) {
		if again := ring.Seal([]byte(number), aad); again == sealed {
			t.Error("two seals of one value are equal: the nonce was reused")
		}
	})
	t.Run("OKOlderKey", func(t *testing.T) {
		old := olderRing.Seal([]byte(number), aad)
		if got, err := ring.Open(old, aad); err != nil || string(got) != number {
			t.Errorf("a value sealed under the older key opens to %q, %v", got, err)
		}
	})

	flip := func(s string, i int) string { // another base64 digit at i
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	for _, tc := range []struct {
		name     string
		sealed   string
		aad      string
		stranger bool  // opened with a ring that holds another key
		want     error // the error, for errors.Is
	}{
		{"ErrTamperedCiphertext", flip(sealed, len(sealed)-30), aad, false, seal.ErrUnsealable},
		{"ErrTamperedNonce", flip(sealed, 21), aad, false, seal.ErrUnsealable},
		{"ErrTamperedTag", flip(sealed, len(sealed)-1), aad, false, seal.ErrUnsealable},
		{"ErrTruncated", sealed[:len(sealed)-4], aad, false, seal.ErrUnsealable},
		{"ErrOnlyHeader", sealed[:20], aad, false, seal.ErrUnsealable},
		{"ErrOtherRow", sealed, "bank_accounts.account_number:0198f0c2-0000-7000-8000-000000000002", false, seal.ErrUnsealable},
		{"ErrOtherColumn", sealed, "payee_banks.account_number:0198f0c2-0000-7000-8000-000000000001", false, seal.ErrUnsealable},
		{"ErrUnknownKey", sealed, aad, true, seal.ErrMissingKey},
		{"ErrKeyIDChanged", "v1:" + older.ID() + sealed[19:], aad, false, seal.ErrUnsealable},
		{"ErrKeyIDUpperCase", "v1:" + strings.ToUpper(newer.ID()) + sealed[19:], aad, false, seal.ErrMissingKey},
		{"ErrPadded", sealed + "==", aad, false, seal.ErrUnsealable},
		{"ErrOtherVersion", "v2" + sealed[2:], aad, false, seal.ErrNotSealed},
		{"ErrPlain", number, aad, false, seal.ErrNotSealed},
		{"ErrEmpty", "", aad, false, seal.ErrNotSealed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ring
			if tc.stranger {
				r = strangerRing
			}
			got, err := r.Open(tc.sealed, tc.aad)
			if err == nil {
				t.Fatalf("opened to %q, want an error", got)
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
			if strings.Contains(err.Error(), number) {
				t.Errorf("error %q shows the value", err)
			}
		})
	}
}

func TestSealedBy(t *testing.T) {
	for _, tc := range []struct {
		name, sealed, id string
		ok               bool
	}{
		{"OK", kat[0].sealed, testKeyID, true},
		{"OKHeaderOnly", "v1:" + testKeyID + ":", testKeyID, true},
		{"NotSealedPlain", "000123456789", "", false},
		{"NotSealedEmpty", "", "", false},
		{"NotSealedShortID", "v1:903b8066b5745fd:x", "", false},
		{"NotSealedNotHex", "v1:903b8066b5745fdz:x", "", false},
		{"NotSealedVersion", "v2:" + testKeyID + ":x", "", false},
		{"NotSealedNoColon", "v1:" + testKeyID + "x", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if id, ok := seal.SealedBy(tc.sealed); id != tc.id || ok != tc.ok {
				t.Errorf("SealedBy(%q) = %q, %v; want %q, %v", tc.sealed, id, ok, tc.id, tc.ok)
			}
		})
	}
}

func TestNewKeyring(t *testing.T) {
	k, older := seal.NewKey(), seal.NewKey()
	t.Run("OK", func(t *testing.T) {
		r := mustRing(t, k, older)
		if r.SealingID() != k.ID() {
			t.Errorf("SealingID %s, want the first key's %s", r.SealingID(), k.ID())
		}
		if ids := r.IDs(); len(ids) != 2 || ids[0] != k.ID() || ids[1] != older.ID() {
			t.Errorf("IDs %v, want [%s %s]", ids, k.ID(), older.ID())
		}
		if !r.Has(older.ID()) || r.Has(seal.NewKey().ID()) {
			t.Error("Has: wrong answer")
		}
	})
	for _, tc := range []struct {
		name string
		keys []seal.Key
	}{
		{"ErrNoKey", nil},
		{"ErrTwice", []seal.Key{k, k}},
		{"ErrZeroKey", []seal.Key{{}}},
		{"ErrZeroOlder", []seal.Key{k, {}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := seal.NewKeyring(tc.keys); err == nil {
				t.Error("no error")
			}
		})
	}
}

// BenchmarkSealing measures what encryption at rest costs one value: sealing and opening
// a linked account number (12 digits) and a platform secret (64 hex digits), and the
// blind index of an account number.
//
//	go test -run '^$' -bench Sealing -benchmem ./internal/seal
func BenchmarkSealing(b *testing.B) {
	ring := mustRing(b, seal.NewKey(), seal.NewKey())
	const id = "0198f0c2-0000-7000-8000-000000000001"
	for _, v := range []struct{ name, plain, aad string }{
		{"account-number", "000123456789", "bank_accounts.account_number:" + id},
		{"platform-secret", strings.Repeat("9a41", 16), "platforms.secret:" + id},
	} {
		b.Run("seal/"+v.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				ring.Seal([]byte(v.plain), v.aad)
			}
		})
		sealed := ring.Seal([]byte(v.plain), v.aad)
		b.Run("open/"+v.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := ring.Open(sealed, v.aad); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	index := seal.NewBlindIndex(bytes.Repeat([]byte{7}, 32))
	b.Run("blind-index/account-number", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			index.BankAccount(id, "021000021", "000123456789")
		}
	})
}
