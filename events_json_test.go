package payments_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// The payload emit writes is json.Marshal's, byte for byte, for every shape of event: the
// ones it writes itself and the ones it leaves to encoding/json.
func TestEventJSON(t *testing.T) {
	at := time.Date(2024, 1, 2, 3, 4, 5, 600700800, time.UTC)
	rates := []string{"GB", "IN"}
	changed := []string{"name"}
	zones := []*time.Location{time.UTC, time.FixedZone("plus", 5*3600+30*60), time.FixedZone("odd", 7), time.FixedZone("minus", -8*3600)}
	times := []time.Time{at, at.Truncate(time.Second), at.Truncate(time.Millisecond), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), {}}
	objects := []payments.EventObject{
		{Type: "user", ID: uuid.NewString()},
		{Type: "bank_account", ID: uuid.NewString(), UserID: uuid.NewString()},
		{Type: "payee_bank", ID: uuid.NewString(), UserID: uuid.NewString(), PayeeID: uuid.NewString()},
		{Type: "exchange_rate", ID: "1", BaseCurrency: "USD", PayoutCurrency: "INR", ExchangeRate: "83.1"},
		{Type: "payee_rules", ID: "2", Countries: rates},
		{Type: "payee_rules", ID: "3", Countries: []string{}},
		{Type: `quote"d`, ID: "<&>"},
		{Type: "user", ID: "tab\there"},
		{Type: "user", ID: "é"},
		{Type: "", ID: ""},
	}
	datas := []payments.EventData{{}, {Reason: "documents expired"}, {Changed: &changed}}
	for _, typ := range append(payments.EventTypes(), "x<y", "") {
		for _, env := range []payments.Environment{payments.Sandbox, payments.Production, "odd\\env"} {
			for _, o := range objects {
				for _, d := range datas {
					for _, ts := range times {
						for _, zone := range zones {
							d.Object = o
							ev := payments.Event{ID: uuid.Must(uuid.NewV7()), Type: typ, Timestamp: ts.In(zone), PlatformID: uuid.New(), Environment: env, Data: d}
							got, gotErr := payments.EventJSON(ev)
							want, wantErr := json.Marshal(ev)
							if string(got) != string(want) || (gotErr == nil) != (wantErr == nil) {
								t.Fatalf("%+v:\n got %s (%v)\nwant %s (%v)", ev, got, gotErr, want, wantErr)
							}
						}
					}
				}
			}
		}
	}
}
