package payments_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/platform-payments/payments/internal/webhook"
)

// TestWebhooksDoc: the worked example of docs/webhooks.md is what the server's signing code
// computes, and the retry schedule it states is the default one.
func TestWebhooksDoc(t *testing.T) {
	raw, err := os.ReadFile("docs/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	const (
		secretText = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		id         = "msg_p5jXN8AQM9LWM0D4loKWxJek"
		timestamp  = 1614265330
		body       = `{"test": 2432232314}`
	)
	secret, err := webhook.ParseSecret(secretText)
	if err != nil {
		t.Fatal(err)
	}
	signature := webhook.Sign(id, time.Unix(timestamp, 0), []byte(body), secret)
	for _, want := range []string{"`" + secretText + "`", "`" + id + "`", "`1614265330`", "`" + body + "`",
		"`" + id + ".1614265330." + body + "`", "`" + signature + "`"} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/webhooks.md does not show %s", want)
		}
	}
	steps := make([]string, len(webhook.DefaultSchedule))
	for i, d := range webhook.DefaultSchedule {
		switch {
		case d%time.Hour == 0:
			steps[i] = fmt.Sprintf("%dh", d/time.Hour)
		case d%time.Minute == 0:
			steps[i] = fmt.Sprintf("%dm", d/time.Minute)
		default:
			steps[i] = fmt.Sprintf("%ds", d/time.Second)
		}
	}
	schedule := strings.Join(steps[:len(steps)-1], ", ") + " and " + steps[len(steps)-1]
	if !strings.Contains(strings.Join(strings.Fields(doc), " "), schedule) {
		t.Errorf("docs/webhooks.md does not state the retry schedule %q", schedule)
	}
}
