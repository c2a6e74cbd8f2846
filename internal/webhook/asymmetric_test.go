package webhook_test

import (
	"bufio"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/platform-payments/payments/internal/webhook"
)

// v1a (ed25519) signatures. The vectors in testdata/v1a_vectors.json were generated with
// Go's crypto/ed25519 from the specification's text: its example message id, timestamp
// and payload (minified and as printed), under keys whose seeds are the SHA-256 of a
// fixed text, so that anyone can derive them again. -update-vectors writes them anew.

var updateVectors = flag.Bool("update-vectors", false, "write testdata/v1a_vectors.json from crypto/ed25519")

// v1aVector is one delivery of the vectors file.
type v1aVector struct {
	Name       string   `json:"name"`
	PrivateKey []string `json:"private_keys"` // whsk_, newest first
	PublicKey  []string `json:"public_keys"`  // whpk_ of each
	ID         string   `json:"id"`
	Timestamp  int64    `json:"timestamp"`
	Payload    string   `json:"payload"`
	Signature  string   `json:"signature"` // the webhook-signature header
}

const vectorsFile = "testdata/v1a_vectors.json"

// seedKey returns the whsk_ text of the key whose seed is the SHA-256 of text.
func seedKey(text string) string {
	seed := sha256.Sum256([]byte(text))
	return "whsk_" + base64.StdEncoding.EncodeToString(seed[:])
}

func makeVectors(t *testing.T) []v1aVector {
	const (
		specID = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"
		specTS = 1674087231
	)
	minified := `{"type":"contact.created","timestamp":"2022-11-03T20:26:10.344522Z","data":{"id":"1f81eb52-5198-4599-803e-771906343485"}}`
	printed := "{\n  \"type\": \"contact.created\",\n  \"timestamp\": \"2022-11-03T20:26:10.344522Z\",\n  \"data\": {\n    \"id\": \"1f81eb52-5198-4599-803e-771906343485\"\n  }\n}"
	k1, k2 := seedKey("standard webhooks v1a vector key 1"), seedKey("standard webhooks v1a vector key 2")
	cases := []struct {
		name    string
		keys    []string
		payload string
	}{
		{"spec example, minified", []string{k1}, minified},
		{"spec example, as printed", []string{k1}, printed},
		{"empty payload", []string{k2}, ""},
		{"rotation: two keys", []string{k2, k1}, minified},
	}
	var out []v1aVector
	for _, c := range cases {
		v := v1aVector{Name: c.name, PrivateKey: c.keys, ID: specID, Timestamp: specTS, Payload: c.payload}
		var secrets []webhook.Secret
		for _, k := range c.keys {
			s := mustParse(t, k)
			pub, _ := s.PublicKey()
			v.PublicKey = append(v.PublicKey, pub.Text())
			secrets = append(secrets, s)
		}
		v.Signature = webhook.Sign(v.ID, time.Unix(v.Timestamp, 0), []byte(v.Payload), secrets...)
		out = append(out, v)
	}
	return out
}

func readVectors(t *testing.T) []v1aVector {
	t.Helper()
	b, err := os.ReadFile(vectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	var vs []v1aVector
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	return vs
}

// TestV1aVectors: Sign writes each committed vector's signatures exactly (ed25519 is
// deterministic), each computed again here with crypto/ed25519 alone, and Verify accepts
// each under each public key and refuses it under another key or another payload.
func TestV1aVectors(t *testing.T) {
	if *updateVectors {
		b, err := json.MarshalIndent(makeVectors(t), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(vectorsFile, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vs := readVectors(t)
	if len(vs) == 0 {
		t.Fatal("no vectors")
	}
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			var secrets []webhook.Secret
			var sigs []string
			for i, k := range v.PrivateKey {
				s := mustParse(t, k)
				secrets = append(secrets, s)
				// The signature by the standard library alone, from the seed.
				seed, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(k, "whsk_"))
				if err != nil {
					t.Fatal(err)
				}
				priv := ed25519.NewKeyFromSeed(seed)
				msg := fmt.Sprintf("%s.%d.%s", v.ID, v.Timestamp, v.Payload)
				sigs = append(sigs, "v1a,"+base64.StdEncoding.EncodeToString(ed25519.Sign(priv, []byte(msg))))
				if want := "whpk_" + base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey)); v.PublicKey[i] != want {
					t.Errorf("public key %d = %s, want %s", i, v.PublicKey[i], want)
				}
			}
			at := time.Unix(v.Timestamp, 0)
			if got := webhook.Sign(v.ID, at, []byte(v.Payload), secrets...); got != v.Signature || got != strings.Join(sigs, " ") {
				t.Fatalf("Sign = %q\nvector %q\ncrypto/ed25519 %q", got, v.Signature, strings.Join(sigs, " "))
			}
			h := map[string][]string{"webhook-id": {v.ID}, "webhook-timestamp": {strconv.FormatInt(v.Timestamp, 10)}, "webhook-signature": {v.Signature}}
			for _, pk := range append(v.PublicKey, v.PrivateKey...) {
				if err := webhook.Verify(mustParse(t, pk), h, []byte(v.Payload), time.Minute, at); err != nil {
					t.Errorf("Verify under %s: %v", pk, err)
				}
			}
			other, _ := webhook.NewKey(true).PublicKey()
			if err := webhook.Verify(other, h, []byte(v.Payload), time.Minute, at); !errors.Is(err, webhook.ErrNoMatchingSignature) {
				t.Errorf("Verify under another key = %v", err)
			}
			if err := webhook.Verify(mustParse(t, v.PublicKey[0]), h, []byte(v.Payload+" "), time.Minute, at); !errors.Is(err, webhook.ErrNoMatchingSignature) {
				t.Errorf("Verify of another payload = %v", err)
			}
		})
	}
}

// TestAsymmetricKeys: the key texts, and what each kind of key signs and verifies.
func TestAsymmetricKeys(t *testing.T) {
	now := time.Unix(1700000000, 0)
	body := []byte(`{"type":"user.created"}`)
	priv := webhook.NewKey(true)
	pub, ok := priv.PublicKey()
	if !ok || !priv.Asymmetric() || !pub.Asymmetric() || !strings.HasPrefix(priv.Text(), "whsk_") || !strings.HasPrefix(pub.Text(), "whpk_") {
		t.Fatalf("NewKey(true) = %s / %s", priv.Text(), pub.Text())
	}
	if s := fmt.Sprintf("%v %s %+v %x", priv, priv, priv, priv); strings.Contains(s, priv.Text()[5:12]) {
		t.Fatalf("a private key prints as %q", s)
	}
	if fmt.Sprint(pub) != pub.Text() {
		t.Fatalf("a public key prints as %q", fmt.Sprint(pub))
	}
	if sym := webhook.NewKey(false); sym.Asymmetric() || !strings.HasPrefix(sym.Text(), "whsec_") {
		t.Fatalf("NewKey(false) = %s", sym)
	} else if _, ok := sym.PublicKey(); ok {
		t.Fatal("a symmetric secret has a public key")
	}
	// The 64-byte form of a private key (seed and public key) reads as its seed.
	seed, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(priv.Text(), "whsk_"))
	full := ed25519.NewKeyFromSeed(seed)
	if got := mustParse(t, "whsk_"+base64.StdEncoding.EncodeToString(full)); got.Text() != priv.Text() {
		t.Fatalf("the 64-byte form reads as %s", got.Text())
	}
	bad := append([]byte(nil), full...)
	bad[63] ^= 1
	if _, err := webhook.ParseSecret("whsk_" + base64.StdEncoding.EncodeToString(bad)); !errors.Is(err, webhook.ErrInvalidSecret) {
		t.Fatalf("a 64-byte key with another public half: %v", err)
	}

	sym := webhook.NewSecret()
	h := webhook.Headers("msg_1", now, body, priv, sym) // a switch of kinds: both sign
	sig := h["Webhook-Signature"][0]
	if !strings.HasPrefix(sig, "v1a,") || !strings.Contains(sig, " v1,") {
		t.Fatalf("signature header %q", sig)
	}
	for name, k := range map[string]webhook.Secret{"public": pub, "private": priv, "symmetric": sym} {
		if err := webhook.Verify(k, h, body, time.Minute, now); err != nil {
			t.Errorf("Verify under the %s key: %v", name, err)
		}
	}
	// A v1a signature never passes as v1, nor a v1 as v1a.
	only := map[string][]string{"webhook-id": {"msg_1"}, "webhook-timestamp": h["Webhook-Timestamp"], "webhook-signature": {strings.Replace(sig, "v1a,", "v1,", 1)}}
	only["webhook-signature"][0], _, _ = strings.Cut(only["webhook-signature"][0], " ")
	if err := webhook.Verify(pub, only, body, time.Minute, now); !errors.Is(err, webhook.ErrNoMatchingSignature) {
		t.Errorf("a v1a signature relabelled v1 under the public key: %v", err)
	}
	if err := webhook.Verify(sym, only, body, time.Minute, now); !errors.Is(err, webhook.ErrNoMatchingSignature) {
		t.Errorf("a v1a signature relabelled v1 under the secret: %v", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Sign with a public key did not panic")
			}
		}()
		webhook.Sign("msg_1", now, body, pub)
	}()
}

// TestNodeReceiver cross-checks v1a with an implementation that is not ours: a receiver
// written with Node's built-in crypto (testdata/v1a_receiver.js) verifies the committed
// vectors, then deliveries this package signs with new keys (and refuses altered ones).
// It is skipped, saying so, when node is not on the PATH.
func TestNodeReceiver(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on the PATH: the cross-check by Node's crypto is skipped")
	}
	out, err := exec.Command(node, "testdata/v1a_receiver.js", "vectors", vectorsFile).CombinedOutput()
	if err != nil {
		t.Fatalf("node verifying the vectors: %v\n%s", err, out)
	}
	if want := fmt.Sprintf("%d vectors verified", len(readVectors(t))); !strings.Contains(string(out), want) {
		t.Fatalf("node said %q, want %q", out, want)
	}

	old, current := webhook.NewKey(true), webhook.NewKey(true)
	pub, _ := current.PublicKey()
	url := StartNodeReceiver(t, node, pub.Text())
	body := []byte(`{"id":"0190a1b2-0000-7000-8000-000000000001","type":"user.created","data":{}}`)
	send := func(h map[string][]string, body string) int {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = http.Header(h)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	now := time.Now()
	ok := webhook.Headers("msg_node_1", now, body, current, old)
	if code := send(ok, string(body)); code != http.StatusNoContent {
		t.Errorf("a delivery signed by the current and the old key: node answered %d", code)
	}
	if code := send(webhook.Headers("msg_node_2", now, body, old), string(body)); code != http.StatusUnauthorized {
		t.Errorf("a delivery signed by the old key alone: node answered %d", code)
	}
	if code := send(ok, string(body)+" "); code != http.StatusUnauthorized {
		t.Errorf("another body: node answered %d", code)
	}
	if code := send(webhook.Headers("msg_node_3", now, body, webhook.NewSecret()), string(body)); code != http.StatusUnauthorized {
		t.Errorf("a v1 signature: node answered %d", code)
	}
}

// StartNodeReceiver starts testdata/v1a_receiver.js on a loopback port, verifying with
// the whpk_ key publicKey, and returns its URL; the test's end stops it.
func StartNodeReceiver(t *testing.T, node, publicKey string) string {
	t.Helper()
	script, err := filepath.Abs("testdata/v1a_receiver.js")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, script, "serve", publicKey)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("node receiver: %v", err)
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("node receiver said %q", line)
	}
	return url
}

// BenchmarkSign: what a delivery's signature costs, v1 (HMAC-SHA256) against v1a
// (ed25519), for an event of a typical size.
func BenchmarkSign(b *testing.B) {
	body := []byte(strings.Repeat("x", 400))
	now := time.Unix(1700000000, 0)
	for name, k := range map[string]webhook.Secret{"v1": webhook.NewSecret(), "v1a": webhook.NewKey(true)} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				webhook.Sign("0190a1b2-0000-7000-8000-000000000001", now, body, k)
			}
		})
	}
}
