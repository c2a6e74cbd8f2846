package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/platform-payments/payments"
)

// keys rotate while a server keeps serving: nothing is lost, nothing is left in the clear.
// (Where the key comes from, keys generate and keys status are testdata/script/keys.txtar.)

// platformClient signs requests to a running server as a platform.
type platformClient struct {
	addr, id, secret string
}

func (c platformClient) do(t *testing.T, method, target, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+c.addr+target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(payments.HeaderPlatformID, c.id)
	req.Header.Set(payments.HeaderSignature, payments.Sign(c.secret, method, target, []byte(body)))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, target, err)
		return 0, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Errorf("%s %s: %d %s", method, target, resp.StatusCode, raw)
	}
	return resp.StatusCode, v
}

func (c platformClient) addAccount(t *testing.T, userID, number string) (int, string) {
	t.Helper()
	code, v := c.do(t, "POST", "/api/platform/accounts/add-account", fmt.Sprintf(
		`{"user_id":%q,"bank_name":"Chase","account_number":%q,"routing_number":"021000021","account_type":"PERSONAL_CHECKING"}`,
		userID, number))
	if code != http.StatusOK {
		return code, ""
	}
	return code, v["data"].(map[string]any)["account_id"].(string)
}

func TestKeysRotateUnderLoad(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "payments.db")
	oldFile := db + ".key"

	// A database on the default key file, with a platform, a verified user and accounts.
	r := runT(t, "", "platform", "create", "-db", db, "-name", "Acme")
	if r.code != 0 {
		t.Fatalf("platform create: %+v", r)
	}
	withoutKeyNote(t, r.stderr, db)
	var creds struct {
		PlatformID string `json:"platform_id"`
		Secret     string `json:"secret"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &creds); err != nil {
		t.Fatal(err)
	}
	addr, log0, stop := serve(t, "-db", db, "-addr", "127.0.0.1:0")
	c := platformClient{addr: addr, id: creds.PlatformID, secret: creds.Secret}
	code, v := c.do(t, "POST", "/api/platform/users/create", `{"name":"Ada","email":"ada@example.com"}`)
	if code != http.StatusOK {
		t.Fatalf("create user: %d %v", code, v)
	}
	userID := v["data"].(map[string]any)["user_id"].(string)
	if r := runT(t, "", "user", "verify", "-db", db, userID); r.code != 0 {
		t.Fatalf("user verify: %+v", r)
	}
	var mu sync.Mutex
	accounts := map[string]string{} // id -> number
	for i := range 40 {
		number := fmt.Sprintf("8100%04d", i)
		code, id := c.addAccount(t, userID, number)
		if code != http.StatusOK {
			t.Fatalf("add account: %d", code)
		}
		accounts[id] = number
	}
	if code := stop(); code != 0 {
		t.Errorf("serve exit status %d", code)
	}

	newFile, newID := generateKey(t, dir, "new.key")
	oldKey, err := payments.ReadKeyFile(oldFile)
	if err != nil {
		t.Fatal(err)
	}

	// Step 1: the server restarts with the new key first and the old one.
	both := []string{"-data-key-file", newFile, "-old-data-key-file", oldFile}
	addr, log1, stop := serve(t, append([]string{"-db", db, "-addr", "127.0.0.1:0"}, both...)...)
	c.addr = addr
	t.Run("ErrOneKeyMidway", func(t *testing.T) {
		r := runT(t, "", "user", "verify", "-db", db, userID)
		if r.code != 1 || !strings.Contains(r.stderr, "is not finished): give that key too, as an older key (the current key: "+
			"-data-key-file or $PAYMENTS_DATA_KEY; older keys: -old-data-key-file or $PAYMENTS_OLD_DATA_KEYS)") {
			t.Errorf("with the default key alone, mid-rotation: %+v", r)
		}
	})
	if r := runT(t, "", append(append([]string{"user", "verify", "-db", db}, both...), userID)...); r.code != 0 {
		t.Errorf("user verify with both keys: %+v", r)
	}

	// Step 2: keys rotate, in small batches, while clients keep adding accounts.
	done := make(chan struct{})
	var load sync.WaitGroup
	load.Add(1)
	go func() {
		defer load.Done()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			number := fmt.Sprintf("8200%04d", i)
			code, id := c.addAccount(t, userID, number)
			if code != http.StatusOK {
				t.Errorf("add account during the rotation: %d", code)
				return
			}
			mu.Lock()
			accounts[id] = number
			mu.Unlock()
		}
	}()
	r = runT(t, "", "keys", "rotate", "-db", db, "-new-key-file", newFile, "-batch", "2")
	close(done)
	load.Wait()
	if r.code != 0 {
		t.Fatalf("keys rotate: %+v", r)
	}
	var rot payments.Rotation
	decodeLine(t, r.stdout, &rot)
	// The 40 accounts, the platform's secret and the blind-index key were under the old key.
	if rot.KeyID != newID || len(rot.Retired) != 1 || rot.Retired[0] != oldKey.ID() || rot.Resealed != 42 {
		t.Errorf("rotation %+v", rot)
	}
	if code := stop(); code != 0 {
		t.Errorf("serve exit status %d", code)
	}
	t.Logf("%d accounts, %d added during the rotation", len(accounts), len(accounts)-40)

	t.Run("Status", func(t *testing.T) {
		r := runT(t, "", "keys", "status", "-db", db, "-data-key-file", newFile)
		var st struct {
			SealingKey string                 `json:"sealing_key"`
			Keys       []payments.DataKeyInfo `json:"keys"`
		}
		decodeLine(t, r.stdout, &st)
		if st.SealingKey != newID || len(st.Keys) != 2 || st.Keys[0].KeyID != oldKey.ID() || st.Keys[0].RetiredAt == nil ||
			st.Keys[0].Values != 0 || st.Keys[1].Values != int64(len(accounts))+2 || st.Keys[0].Configured {
			t.Errorf("keys status %s", r.stdout)
		}
	})
	t.Run("AgainDoesNothing", func(t *testing.T) {
		r := runT(t, "", "keys", "rotate", "-db", db, "-data-key-file", newFile, "-new-key-file", newFile)
		if r.code != 0 || !strings.Contains(r.stdout, `"resealed":0,"retired":[]`) {
			t.Errorf("got %+v", r)
		}
	})

	// Step 3: the server restarts with the new key alone. Nothing was lost.
	addr, log2, stop := serve(t, "-db", db, "-addr", "127.0.0.1:0", "-data-key-file", newFile)
	c.addr = addr
	for id, number := range accounts {
		code, v := c.do(t, "GET", "/api/platform/accounts/get-account/"+id, "")
		if got, _ := v["data"].(map[string]any)["account_number"].(string); code != http.StatusOK || got != number[len(number)-4:] {
			t.Errorf("account %s: %d %v, want last four of %s", id, code, v, number)
		}
		if code, _ := c.addAccount(t, userID, number); code != http.StatusConflict {
			t.Errorf("account %s linked again: %d, want 409", number, code)
		}
	}
	if code := stop(); code != 0 {
		t.Errorf("serve exit status %d", code)
	}

	t.Run("NoPlainValues", func(t *testing.T) {
		needles := []string{creds.Secret, base64.StdEncoding.EncodeToString([]byte(creds.Secret))}
		for _, n := range accounts {
			needles = append(needles, n)
		}
		for name, text := range map[string]string{"the log of the server before": log0.String(),
			"during": log1.String(), "after the rotation": log2.String()} {
			for _, n := range needles {
				if strings.Contains(text, n) {
					t.Errorf("%s shows %s", name, n)
				}
			}
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range needles {
				if bytes.Contains(b, []byte(n)) {
					t.Errorf("%s holds %s", e.Name(), n)
				}
			}
		}
	})
}
