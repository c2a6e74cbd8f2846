package validate

import (
	"slices"
	"strings"
	"testing"
)

// The compiled fast path of requests made of UUID path parameters says what the schema
// says, for every form of id; a failure always takes the schema's path, so its 422 is the
// schema's.
func TestUUIDFastPath(t *testing.T) {
	v := testValidator(t)
	var names []string
	for name := range v.uuidOnly {
		names = append(names, name)
	}
	slices.Sort(names)
	if got, want := strings.Join(names, " "), "accounts_get addresses_get events_get payee_banks_delete users_get webhooks_endpoint"; got != want {
		t.Errorf("fast-path requests %q, want %q", got, want)
	}
	ids := []string{"7f0c2a4e-1b7d-4c61-9a53-0d8e7f6b5a41", "7F0C2A4E-1B7D-4C61-9A53-0D8E7F6B5A41",
		"7f0c2a4e1b7d4c619a530d8e7f6b5a41", "{7f0c2a4e-1b7d-4c61-9a53-0d8e7f6b5a41}",
		"urn:uuid:7f0c2a4e-1b7d-4c61-9a53-0d8e7f6b5a41", "7f0c2a4e-1b7d-4c61-9a53-0d8e7f6b5a4",
		"7f0c2a4e-1b7d-4c61-9a53-0d8e7f6b5a4g", "", "not-an-id", "7f0c2a4e_1b7d_4c61_9a53_0d8e7f6b5a41"}
	for _, id := range ids {
		doc := map[string]any{"path": map[string]any{"user_id": id}, "query": map[string]any{}}
		fast := v.uuidPath("users_get", map[string]string{"user_id": id})
		schema := v.schemas["users_get"].Validate(doc) == nil
		if fast && !schema {
			t.Errorf("%q: the fast path accepts what the schema refuses", id)
		}
		if !fast && schema {
			t.Logf("%q: the fast path leaves to the schema what it accepts (allowed, only slower)", id)
		}
	}
}

// The fast path takes a request only with every parameter of its route, each a UUID: a
// missing or extra parameter, or a request the fast path does not know, goes to the schema.
func TestUUIDFastPathParameters(t *testing.T) {
	v := testValidator(t)
	const id = "7f0c2a4e-1b7d-4c61-9a53-0d8e7f6b5a41"
	for _, c := range []struct {
		name string
		path map[string]string
		fast bool
	}{
		{"payee_banks_delete", map[string]string{"user_id": id, "bank_uuid": id}, true},
		{"payee_banks_delete", map[string]string{"user_id": id}, false},
		{"payee_banks_delete", map[string]string{"user_id": id, "bank_id": id}, false},
		{"payee_banks_delete", map[string]string{"user_id": id, "bank_uuid": "x"}, false},
		{"users_get", map[string]string{"user_id": id, "other": id}, false},
		{"users_get", nil, false},
		{"users_create", map[string]string{}, false},
	} {
		before := v.Validations()
		fast := v.uuidPath(c.name, c.path)
		if fast != c.fast {
			t.Errorf("%s %v: fast path %v, want %v", c.name, c.path, fast, c.fast)
		}
		if counted := v.Validations() - before; counted != map[bool]int64{true: 1}[fast] {
			t.Errorf("%s %v: %d validations counted", c.name, c.path, counted)
		}
	}
}
