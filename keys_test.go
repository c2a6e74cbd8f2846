package payments_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/pgtest"
)

// Encryption at rest: sealing and opening values, the blind index, data keys and their
// files, and what Open does with a key that does not match.

func TestSealOpen(t *testing.T) {
	older, newer, stranger := payments.NewDataKey(), payments.NewDataKey(), payments.NewDataKey()
	ring, err := payments.NewKeyring([]payments.DataKey{newer, older})
	if err != nil {
		t.Fatal(err)
	}
	olderRing, err := payments.NewKeyring([]payments.DataKey{older})
	if err != nil {
		t.Fatal(err)
	}
	strangerRing, err := payments.NewKeyring([]payments.DataKey{stranger})
	if err != nil {
		t.Fatal(err)
	}
	const number, aad = "000123456789", "bank_accounts.account_number:0198f0c2-0000-7000-8000-000000000001"
	sealed := payments.Seal(ring, number, aad)

	t.Run("OK", func(t *testing.T) {
		if !strings.HasPrefix(sealed, "v1:"+newer.ID()+":") {
			t.Errorf("sealed %q: want it under the newest key %s", sealed, newer.ID())
		}
		if strings.Contains(sealed, number) || strings.Contains(sealed, base64.RawStdEncoding.EncodeToString([]byte(number))) {
			t.Errorf("sealed %q shows the number", sealed)
		}
		if got, err := payments.Unseal(ring, sealed, aad); err != nil || got != number {
			t.Errorf("open = %q, %v", got, err)
		}
		if id, ok := payments.SealedKeyID(sealed); !ok || id != newer.ID() {
			t.Errorf("key id %q, %v", id, ok)
		}
	})
	t.Run("OKNewNonceEachTime", func(t *testing.T) {
		if again := payments.Seal(ring, number, aad); again == sealed {
			t.Error("two seals of one value are equal: the nonce was reused")
		}
	})
	t.Run("OKOlderKey", func(t *testing.T) {
		old := payments.Seal(olderRing, number, aad)
		if got, err := payments.Unseal(ring, old, aad); err != nil || got != number {
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
	bad := []struct {
		name     string
		sealed   string
		aad      string
		stranger bool  // opened with a ring that holds another key
		want     error // nil: any error
	}{
		{"ErrTamperedCiphertext", flip(sealed, len(sealed)-30), aad, false, nil},
		{"ErrTamperedNonce", flip(sealed, 21), aad, false, nil},
		{"ErrTamperedTag", flip(sealed, len(sealed)-1), aad, false, nil},
		{"ErrTruncated", sealed[:len(sealed)-4], aad, false, nil},
		{"ErrOnlyHeader", sealed[:20], aad, false, nil},
		{"ErrOtherRow", sealed, "bank_accounts.account_number:0198f0c2-0000-7000-8000-000000000002", false, nil},
		{"ErrOtherColumn", sealed, "payee_banks.account_number:0198f0c2-0000-7000-8000-000000000001", false, nil},
		{"ErrUnknownKey", sealed, aad, true, payments.ErrMissingDataKey},
		{"ErrKeyIDChanged", "v1:" + older.ID() + sealed[19:], aad, false, nil},
		{"ErrOtherVersion", "v2" + sealed[2:], aad, false, nil},
		{"ErrPlain", number, aad, false, nil},
		{"ErrEmpty", "", aad, false, nil},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			r := ring
			if tc.stranger {
				r = strangerRing
			}
			got, err := payments.Unseal(r, tc.sealed, tc.aad)
			if err == nil {
				t.Fatalf("opened to %q, want an error", got)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
			if strings.Contains(err.Error(), number) {
				t.Errorf("error %q shows the value", err)
			}
		})
	}
}

func TestNewKeyring(t *testing.T) {
	k := payments.NewDataKey()
	for name, keys := range map[string][]payments.DataKey{
		"ErrNoKey":     nil,
		"ErrTwice":     {k, k},
		"ErrZeroKey":   {{}},
		"ErrZeroOlder": {k, {}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := payments.NewKeyring(keys); err == nil {
				t.Error("no error")
			}
		})
	}
}

func TestBlindIndex(t *testing.T) {
	root := bytes.Repeat([]byte{7}, 32)
	index := payments.BlindIndex(root)
	const user, routing, number = "0198f0c2-0000-7000-8000-000000000001", "021000021", "000123456789"
	first := index(user, routing, number)
	if len(first) != 32 {
		t.Fatalf("index of %d bytes, want 32 (HMAC-SHA256)", len(first))
	}
	t.Run("OKStable", func(t *testing.T) {
		if again := payments.BlindIndex(bytes.Clone(root))(user, routing, number); !bytes.Equal(again, first) {
			t.Errorf("index %x, then %x", first, again)
		}
	})
	for name, other := range map[string][]byte{
		"OtherNumber":     index(user, routing, "000123456788"),
		"OtherRouting":    index(user, "011000015", number),
		"OtherUser":       index("0198f0c2-0000-7000-8000-000000000002", routing, number),
		"OtherKey":        payments.BlindIndex(bytes.Repeat([]byte{8}, 32))(user, routing, number),
		"NoFieldBleeding": index(user, routing+"0", number[1:]),
	} {
		t.Run(name, func(t *testing.T) {
			if bytes.Equal(other, first) {
				t.Errorf("same index %x", first)
			}
		})
	}
	t.Run("NotThePlainHash", func(t *testing.T) {
		if strings.Contains(hex.EncodeToString(first), number) {
			t.Error("the index shows the number")
		}
	})
}

func TestParseDataKey(t *testing.T) {
	raw := bytes.Repeat([]byte{0xa5}, 32)
	text := base64.StdEncoding.EncodeToString(raw)
	k, err := payments.ParseDataKey("  " + text + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if k.ID() == "" || len(k.ID()) != 16 {
		t.Errorf("id %q, want 16 hex digits", k.ID())
	}
	for name, bad := range map[string]string{
		"ErrShort":     base64.StdEncoding.EncodeToString(raw[:31]),
		"ErrLong":      base64.StdEncoding.EncodeToString(append(raw, 1)),
		"ErrNotBase64": strings.Repeat("%", 44),
		"ErrZeros":     base64.StdEncoding.EncodeToString(make([]byte, 32)),
		"ErrEmpty":     "",
		"ErrHex":       hex.EncodeToString(raw),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := payments.ParseDataKey(bad); err == nil {
				t.Error("no error")
			} else if bad != "" && strings.Contains(err.Error(), bad) {
				t.Errorf("error %q shows the text", err)
			}
		})
	}

	t.Run("NeverPrinted", func(t *testing.T) {
		var log bytes.Buffer
		slog.New(slog.NewJSONHandler(&log, nil)).Info("key", "key", k)
		printed := fmt.Sprintf("%v %+v %#v %s %x %X %d %q", k, k, k, k, k, k, k, k) + log.String()
		for _, form := range []string{text, hex.EncodeToString(raw), "165, 165", "a5a5"} {
			if strings.Contains(strings.ToLower(printed), strings.ToLower(form)) {
				t.Errorf("printed %s", printed)
			}
		}
		if !strings.Contains(printed, k.ID()) {
			t.Errorf("printed %s: want the key id", printed)
		}
	})
}

// TestKeyFile: the key file Open creates, then reads. On SQLite it is the default one,
// beside the database; on PostgreSQL (whose default is in the working directory) the
// test's, given as Options.KeyFile.
func TestKeyFile(t *testing.T) {
	ctx := context.Background()
	path := newDSN(t)
	var opts payments.Options
	keyFile := path + ".key"
	if pgtest.Enabled() {
		keyFile = pgtest.KeyFile(path)
		opts.KeyFile = keyFile
	}

	svc, err := payments.Open(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := svc.CreatedKeyFile(); got != keyFile {
		t.Errorf("CreatedKeyFile = %q, want %q", got, keyFile)
	}
	id := svc.DataKeyID()
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", info.Mode().Perm())
	}
	k, err := payments.ReadKeyFile(keyFile)
	if err != nil || k.ID() != id {
		t.Fatalf("key file holds %v (%v), want key %s", k, err, id)
	}
	if !pgtest.Enabled() { // beside a SQLite database
		if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 2 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("directory holds %v, want the database and its key file only", names)
		}
	}

	t.Run("OKReadAgain", func(t *testing.T) {
		svc := mustOpenFile(t, path)
		if svc.CreatedKeyFile() != "" || svc.DataKeyID() != id {
			t.Errorf("reopened: created %q, key %s; want none created, key %s", svc.CreatedKeyFile(), svc.DataKeyID(), id)
		}
	})
	t.Run("OKGivenKey", func(t *testing.T) {
		mustOpenFile(t, path, payments.Options{DataKeys: []payments.DataKey{k}})
	})
	t.Run("OKOtherKeyFile", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "elsewhere.key")
		svc := mustOpenFile(t, newDSN(t), payments.Options{KeyFile: other})
		if svc.CreatedKeyFile() != other {
			t.Errorf("CreatedKeyFile = %q, want %q", svc.CreatedKeyFile(), other)
		}
	})
	t.Run("ErrWriteOverExisting", func(t *testing.T) {
		if err := payments.WriteKeyFile(keyFile, payments.NewDataKey()); err == nil {
			t.Fatal("an existing key file was replaced")
		}
		if again, _ := payments.ReadKeyFile(keyFile); again.ID() != id {
			t.Errorf("key file now holds %v", again)
		}
	})
	t.Run("ErrKeyFileMissing", func(t *testing.T) {
		moved := filepath.Join(t.TempDir(), "payments.db.key")
		if err := os.Rename(keyFile, moved); err != nil {
			t.Fatal(err)
		}
		defer os.Rename(moved, keyFile)
		_, err := payments.Open(ctx, path, opts)
		if !errors.Is(err, payments.ErrMissingDataKey) || !strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), keyFile) {
			t.Errorf("error %v, want ErrMissingDataKey naming %s and %s", err, keyFile, id)
		}
		if _, err := os.Stat(keyFile); !errors.Is(err, os.ErrNotExist) {
			t.Error("Open made a new key file for a database that has a key")
		}
	})
	t.Run("ErrKeyFileDamaged", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad.key")
		if err := os.WriteFile(bad, []byte("not a key\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := payments.Open(ctx, path, payments.Options{KeyFile: bad}); err == nil || !strings.Contains(err.Error(), "base64 of 32 bytes") {
			t.Errorf("error %v", err)
		}
	})
}

func TestOpenWrongKey(t *testing.T) {
	ctx := context.Background()
	path := newDSN(t)
	right, wrong := payments.NewDataKey(), payments.NewDataKey()
	svc := mustOpenFile(t, path, payments.Options{DataKeys: []payments.DataKey{right}})
	mustPlatform(t, svc)
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}

	_, err := payments.Open(ctx, path, payments.Options{DataKeys: []payments.DataKey{wrong}})
	if !errors.Is(err, payments.ErrWrongDataKey) {
		t.Fatalf("error %v, want ErrWrongDataKey", err)
	}
	want := fmt.Sprintf("payments: open %s: the data key does not match this database (key id %s; its values are sealed under key id %s)",
		path, wrong.ID(), right.ID())
	if err.Error() != want {
		t.Errorf("error\n %s\nwant\n %s", err, want)
	}
	t.Run("ErrUnknownOlderKey", func(t *testing.T) {
		_, err := payments.Open(ctx, path, payments.Options{DataKeys: []payments.DataKey{right, wrong}})
		if !errors.Is(err, payments.ErrWrongDataKey) || !strings.Contains(err.Error(), wrong.ID()) {
			t.Errorf("error %v, want ErrWrongDataKey naming %s", err, wrong.ID())
		}
	})
	t.Run("OKAfterwards", func(t *testing.T) { // a refused key left nothing behind
		mustOpenFile(t, path, payments.Options{DataKeys: []payments.DataKey{right}})
	})
}

// BenchmarkSealing measures what encryption at rest costs one value: sealing and opening
// a linked account number (12 digits) and a platform secret (64 hex digits), and the
// blind index of an account number.
//
//	go test -run '^$' -bench Sealing -benchmem .
func BenchmarkSealing(b *testing.B) {
	ring, err := payments.NewKeyring([]payments.DataKey{payments.NewDataKey(), payments.NewDataKey()})
	if err != nil {
		b.Fatal(err)
	}
	const id = "0198f0c2-0000-7000-8000-000000000001"
	values := []struct{ name, plain, aad string }{
		{"account-number", "000123456789", payments.BankAccountNumberAAD(id)},
		{"platform-secret", strings.Repeat("9a41", 16), payments.PlatformSecretAAD(id)},
	}
	for _, v := range values {
		b.Run("seal/"+v.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				payments.Seal(ring, v.plain, v.aad)
			}
		})
		sealed := payments.Seal(ring, v.plain, v.aad)
		b.Run("open/"+v.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := payments.Unseal(ring, sealed, v.aad); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	index := payments.BlindIndex(bytes.Repeat([]byte{7}, 32))
	b.Run("blind-index/account-number", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			index(id, "021000021", "000123456789")
		}
	})
}
