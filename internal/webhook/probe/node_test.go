package probe_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/platform-payments/payments/internal/webhook"
	"github.com/platform-payments/payments/internal/webhook/probe"
)

// The probe against a receiver that is not ours: the v1a receiver written with Node's
// built-in crypto (../testdata/v1a_receiver.js) passes every case it can be judged on,
// with an ed25519 key. Skipped, saying so, when node is not on the PATH.
func TestProbeNodeReceiver(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on the PATH: the probe of the Node receiver is skipped")
	}
	key := webhook.NewKey(true)
	public, _ := key.PublicKey()
	cmd := exec.Command(node, "../testdata/v1a_receiver.js", "serve", public.Text())
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
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("node receiver said %q (%v)", line, err)
	}
	for _, r := range probe.Run(context.Background(), probe.Config{URL: url, Key: key, Client: client(loopback)}) {
		if r.Outcome != probe.Pass && !(r.Outcome == probe.CannotTell && r.Case == "same webhook-id processed once") {
			t.Errorf("%s: %s (%s)", r.Case, r.Outcome, r.Detail)
		}
	}
}
