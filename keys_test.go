package payments_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/pgtest"
)

// Data keys at Open: the key file it creates, then reads, and what it does with a key that
// does not match. Sealing itself, the blind index and key parsing are tested in
// internal/seal.

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
	if got := svc.DataKeys().CreatedFile(); got != keyFile {
		t.Errorf("CreatedKeyFile = %q, want %q", got, keyFile)
	}
	id := svc.DataKeys().SealingID()
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
		if svc.DataKeys().CreatedFile() != "" || svc.DataKeys().SealingID() != id {
			t.Errorf("reopened: created %q, key %s; want none created, key %s", svc.DataKeys().CreatedFile(), svc.DataKeys().SealingID(), id)
		}
	})
	t.Run("OKGivenKey", func(t *testing.T) {
		mustOpenFile(t, path, payments.Options{DataKeys: []payments.DataKey{k}})
	})
	t.Run("OKOtherKeyFile", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "elsewhere.key")
		svc := mustOpenFile(t, newDSN(t), payments.Options{KeyFile: other})
		if svc.DataKeys().CreatedFile() != other {
			t.Errorf("CreatedKeyFile = %q, want %q", svc.DataKeys().CreatedFile(), other)
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

// Options.ReadOnly opens a database to report on it: it registers no key, writes nothing,
// and refuses a database that does not exist rather than making one.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	path := newDSN(t)
	current, next := payments.NewDataKey(), payments.NewDataKey()
	svc := mustOpenFile(t, path, payments.Options{DataKeys: []payments.DataKey{current}})
	mustPlatform(t, svc)
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name             string
		keys             []payments.DataKey
		sealing, unknown string
	}{
		{"Current", []payments.DataKey{current}, current.ID(), ""},
		{"NewKeyNotRegistered", []payments.DataKey{next, current}, current.ID(), next.ID()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ro := mustOpenFile(t, path, payments.Options{DataKeys: tt.keys, ReadOnly: true})
			keys, err := ro.DataKeys().List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if ro.DataKeys().SealingID() != tt.sealing || ro.DataKeys().Unregistered() != tt.unknown || len(keys) != 1 || keys[0].KeyID != current.ID() {
				t.Errorf("sealing %s, unregistered %q, keys %+v; want %s, %q and %s alone", ro.DataKeys().SealingID(), ro.DataKeys().Unregistered(), keys, tt.sealing, tt.unknown, current.ID())
			}
			if _, err := ro.CreatePlatform(ctx, "Acme", payments.Sandbox); err == nil || !strings.Contains(err.Error(), "read-only") {
				t.Errorf("a write of a read-only service: %v", err)
			}
		})
	}
	t.Run("ErrNextAlone", func(t *testing.T) { // nothing registered it
		_, err := payments.Open(ctx, path, payments.Options{DataKeys: []payments.DataKey{next}, ReadOnly: true})
		if !errors.Is(err, payments.ErrWrongDataKey) {
			t.Errorf("error %v, want ErrWrongDataKey", err)
		}
	})
	t.Run("ErrNoDatabase", func(t *testing.T) {
		dsn := newDSN(t)
		_, err := payments.Open(ctx, dsn, payments.Options{DataKeys: []payments.DataKey{current}, ReadOnly: true})
		if err == nil || !strings.Contains(err.Error(), "opened to read only") {
			t.Fatalf("error %v, want a refusal", err)
		}
		if !pgtest.Enabled() {
			if _, err := os.Stat(dsn); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the read-only open made %s: %v", dsn, err)
			}
		}
		// The first open that writes makes it, as before.
		mustOpenFile(t, dsn, payments.Options{DataKeys: []payments.DataKey{current}})
	})
	t.Run("WritesNothing", func(t *testing.T) { // the next open registers the new key: no one did before
		svc := mustOpenFile(t, path, payments.Options{DataKeys: []payments.DataKey{next, current}})
		keys, err := svc.DataKeys().List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 2 || svc.DataKeys().SealingID() != next.ID() {
			t.Errorf("keys %+v after opening with the new key first", keys)
		}
	})
}
