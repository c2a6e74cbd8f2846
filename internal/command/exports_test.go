package command

import (
	"bytes"
	"strings"
	"testing"
)

// An Export's Member may name alternatives: the first present sets the variable, as
// webhook add's $WEBHOOK_SECRET is the secret, or an ed25519 endpoint's public_key.
func TestExportsAlternatives(t *testing.T) {
	for _, c := range []struct {
		printed, want, err string
	}{
		{`{"id":"e1","secret":"whsec_x"}`, "whsec_x", ""},
		{`{"id":"e1","public_key":"whpk_y"}`, "whpk_y", ""},
		{`{"id":"e1","secret":"whsec_x","public_key":"whpk_y"}`, "whsec_x", ""},
		{`{"id":"e1"}`, "", `printed no "secret|public_key" to set $WEBHOOK_SECRET`},
	} {
		x := &Invocation{Command: webhookAdd, Stdout: &bytes.Buffer{}}
		if err := x.PrintJSON(rawJSON(c.printed)); err != nil {
			t.Fatal(err)
		}
		vars, err := x.Exports()
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: err %v, want %q", c.printed, err, c.err)
		case c.err == "" && (err != nil || vars["WEBHOOK_SECRET"] != c.want || vars["WEBHOOK_ID"] != "e1"):
			t.Errorf("%s: %v, %v; want WEBHOOK_SECRET=%s", c.printed, vars, err, c.want)
		}
	}
}

// rawJSON prints as itself.
type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }
