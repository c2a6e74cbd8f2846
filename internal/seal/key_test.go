package seal_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/platform-payments/payments/internal/seal"
)

func TestParseKey(t *testing.T) {
	raw := bytes.Repeat([]byte{0xa5}, 32)
	text := base64.StdEncoding.EncodeToString(raw)
	want := mustKey(t, text).ID()
	for _, tc := range []struct{ name, text string }{
		{"OK", text},
		{"OKSpaces", "  " + text + "\n"},
		{"OKFileForm", text + "\n"},
		{"OKCRLF", text + "\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := seal.ParseKey(tc.text)
			if err != nil || k.ID() != want {
				t.Errorf("ParseKey = %v, %v; want key %s", k, err, want)
			}
		})
	}
	if len(want) != 16 {
		t.Errorf("id %q, want 16 hex digits", want)
	}

	for _, tc := range []struct{ name, text, msg string }{
		{"ErrShort", base64.StdEncoding.EncodeToString(raw[:31]), "a data key is the base64 of 32 bytes, not 31"},
		{"ErrLong", base64.StdEncoding.EncodeToString(append(raw, 1)), "a data key is the base64 of 32 bytes, not 33"},
		{"ErrNotBase64", strings.Repeat("%", 44), "a data key is the base64 of 32 bytes: not base64"},
		{"ErrURLAlphabet", strings.Repeat("_", 43) + "=", "a data key is the base64 of 32 bytes: not base64"},
		{"ErrZeros", base64.StdEncoding.EncodeToString(make([]byte, 32)), "a data key of 32 zero bytes is not a key"},
		{"ErrEmpty", "", "a data key is the base64 of 32 bytes, not 0"},
		{"ErrHex", hex.EncodeToString(raw), "a data key is the base64 of 32 bytes, not 48"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := seal.ParseKey(tc.text)
			if err == nil || err.Error() != tc.msg {
				t.Errorf("error %v, want %q", err, tc.msg)
			}
		})
	}
}

func TestKeyNeverPrinted(t *testing.T) {
	raw := bytes.Repeat([]byte{0xa5}, 32)
	text := base64.StdEncoding.EncodeToString(raw)
	k := mustKey(t, text)
	var log bytes.Buffer
	slog.New(slog.NewJSONHandler(&log, nil)).Info("key", "key", k, "keys", []seal.Key{k})
	printed := fmt.Sprintf("%v %+v %#v %s %x %X %d %q %v", k, k, k, k, k, k, k, k, []seal.Key{k}) + log.String()
	for _, form := range []string{text, hex.EncodeToString(raw), "165, 165", "165 165", "a5a5"} {
		if strings.Contains(strings.ToLower(printed), strings.ToLower(form)) {
			t.Errorf("printed %s", printed)
		}
	}
	if !strings.Contains(printed, k.ID()) {
		t.Errorf("printed %s: want the key id", printed)
	}
	if got := k.String(); got != "DataKey("+k.ID()+")" {
		t.Errorf("String() = %q", got)
	}
}

func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "payments.db.key")
	k := seal.NewKey()
	if err := seal.WriteKeyFile(path, k); err != nil {
		t.Fatal(err)
	}

	t.Run("OK", func(t *testing.T) {
		got, err := seal.ReadKeyFile(path)
		if err != nil || got.ID() != k.ID() {
			t.Errorf("ReadKeyFile = %v, %v; want %v", got, err, k)
		}
	})
	t.Run("OKOwnerOnly", func(t *testing.T) {
		info, err := os.Stat(path)
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("mode %v (%v), want 0600", info.Mode().Perm(), err)
		}
	})
	t.Run("OKNoTemporaryFile", func(t *testing.T) {
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("directory holds %v, want the key file only", entries)
		}
	})
	t.Run("ErrExists", func(t *testing.T) {
		err := seal.WriteKeyFile(path, seal.NewKey())
		if !errors.Is(err, fs.ErrExist) {
			t.Errorf("error %v, want fs.ErrExist", err)
		}
		if got, _ := seal.ReadKeyFile(path); got.ID() != k.ID() {
			t.Errorf("the key file now holds %v", got)
		}
	})
	t.Run("ErrNotExist", func(t *testing.T) { // Open creates a key file on this error
		if _, err := seal.ReadKeyFile(filepath.Join(dir, "none.key")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("error %v, want fs.ErrNotExist", err)
		}
	})
	t.Run("ErrDamaged", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.key")
		const content = "not a key, 1234567890\n"
		if err := os.WriteFile(bad, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := seal.ReadKeyFile(bad)
		if err == nil || !strings.Contains(err.Error(), bad) || strings.Contains(err.Error(), "1234567890") {
			t.Errorf("error %v: want one naming the file, not its content", err)
		}
	})
}
