// Package eventjson writes the JSON of a thin event (ids, a type, the time) without
// reflection: the bytes encoding/json writes for payments.Event, faster.
package eventjson

import "time"

// Event is a thin event: what payments.Event holds when its data has no reason, changed
// fields, rate or countries.
type Event struct {
	ID, Type                     string
	Timestamp                    time.Time
	PlatformID, Environment      string
	ObjectType, ObjectID         string
	UserID, PayeeID              string
	BaseCurrency, PayoutCurrency string
}

// Append appends the JSON of ev to b as encoding/json writes payments.Event. It reports
// false, and appends nothing, when that JSON is not written as it is here: a string that
// needs escaping, or a time encoding/json refuses or writes otherwise.
func Append(b []byte, ev Event) ([]byte, bool) {
	_, offset := ev.Timestamp.Zone()
	if year := ev.Timestamp.Year(); year < 0 || year > 9999 || offset%60 != 0 || offset <= -24*3600 || offset >= 24*3600 ||
		!plain(ev.Type) || !plain(ev.Environment) || !plain(ev.ObjectType) || !plain(ev.ObjectID) ||
		!plain(ev.UserID) || !plain(ev.PayeeID) || !plain(ev.BaseCurrency) || !plain(ev.PayoutCurrency) {
		return b, false
	}
	b = append(b, `{"id":"`...)
	b = append(b, ev.ID...)
	b = append(b, `","type":"`...)
	b = append(b, ev.Type...)
	b = append(b, `","timestamp":"`...)
	b = ev.Timestamp.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","platform_id":"`...)
	b = append(b, ev.PlatformID...)
	b = append(b, `","environment":"`...)
	b = append(b, ev.Environment...)
	b = append(b, `","data":{"object":{"type":"`...)
	b = append(b, ev.ObjectType...)
	b = append(b, `","id":"`...)
	b = append(b, ev.ObjectID...)
	b = append(b, '"')
	for _, f := range [...]struct{ name, value string }{
		{"user_id", ev.UserID}, {"payee_id", ev.PayeeID}, {"base_currency", ev.BaseCurrency}, {"payout_currency", ev.PayoutCurrency},
	} {
		if f.value != "" {
			b = append(b, `,"`...)
			b = append(b, f.name...)
			b = append(b, `":"`...)
			b = append(b, f.value...)
			b = append(b, '"')
		}
	}
	return append(b, "}}}"...), true
}

// plain reports whether s is written in JSON as it is: printable ASCII that encoding/json
// does not escape.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}
