package command

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// webhook trigger: a real event of a type, for testers, made by making the change that
// emits it (as stripe trigger does), on a sandbox platform only.

var webhookTrigger = &Command{
	Name:    "webhook trigger",
	Summary: "Make a real event of TYPE on a sandbox platform by making the change that emits it, and print what was made as JSON.",
	Usage:   "-platform ID TYPE",
	Details: `It prints {"type", "platform_id", "user_id", "object_id"} (object_id: the id of the event's
data.object) and the ids of what else it made. The change is made through the library, as the API makes it, on a new user of the platform
named "Trigger Test" (and what the type needs beside it: a card to delete, a payee to
rename, a payee bank to delete, ...); the event goes to the platform's endpoints subscribed
to TYPE like any other, and is listed by List Events. TYPE is one of
` + strings.Join(triggerable(), ", ") + `.
A production platform is refused: its data is real. exchange_rate.updated and
payee_rules.updated are refused too: rates and payee rules belong to the whole service, and
their events go to every platform, production ones included (make them with rates set and
rules load).`,
	Uses: UsesDatabase,
	Sets: []Export{{"TRIGGER_USER_ID", "user_id"}, {"TRIGGER_OBJECT_ID", "object_id"}},
	Run:  runWebhookTrigger,
}

// triggered is what webhook trigger prints: the type and the objects it made.
type triggered struct {
	Type       string     `json:"type"`
	PlatformID uuid.UUID  `json:"platform_id"`
	UserID     string     `json:"user_id"`
	ObjectID   string     `json:"object_id"` // the id of the event's data.object
	AccountID  *uuid.UUID `json:"account_id,omitempty"`
	CardID     *uuid.UUID `json:"card_id,omitempty"`
	PayeeID    *uuid.UUID `json:"payee_id,omitempty"`
	BankID     *uuid.UUID `json:"bank_id,omitempty"`
	AddressID  *uuid.UUID `json:"address_id,omitempty"`
}

// globalTypes are the event types of changes to the whole service, which trigger refuses.
var globalTypes = []string{payments.EventExchangeRateUpdated, payments.EventPayeeRulesUpdated}

// triggerable returns the types webhook trigger makes: every type but globalTypes.
func triggerable() []string {
	var out []string
	for _, t := range payments.EventTypes() {
		if !contains(globalTypes, t) {
			out = append(out, t)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func runWebhookTrigger(ctx context.Context, x *Invocation, args []string) error {
	fs := x.FlagSet()
	platform := idFlag(fs, "platform", "the `ID` of the sandbox platform (required)")
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	if err := required(platform); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return Usagef("want one event TYPE: %s", strings.Join(triggerable(), ", "))
	}
	typ := fs.Arg(0)
	switch {
	case contains(globalTypes, typ):
		return Usagef("%s is refused: it tells of a change to the whole service, sent to every platform, production ones included (make it with rates set or rules load)", typ)
	case !contains(payments.EventTypes(), typ):
		return Usagef("unknown event type %q: want one of %s", typ, strings.Join(triggerable(), ", "))
	}
	return x.printResult(ctx, func(svc *payments.Service) (any, error) {
		env, found, err := svc.Outbox().PlatformEnvironment(ctx, platform.String())
		switch {
		case err != nil:
			return nil, err
		case !found:
			return nil, payments.Errorf(payments.CodeNotFound, "Platform not found.")
		case payments.Environment(env) != payments.Sandbox:
			return nil, fmt.Errorf("platform %s is a %s platform: webhook trigger makes changes on sandbox platforms only", platform.String(), env)
		}
		out, err := trigger(ctx, svc, platform.value, typ)
		out.ObjectID = out.objectID()
		return out, err
	})
}

// trigger makes the change that emits an event of typ on the platform.
func trigger(ctx context.Context, svc *payments.Service, platformID uuid.UUID, typ string) (triggered, error) {
	out := triggered{Type: typ, PlatformID: platformID}
	tag := make([]byte, 4)
	rand.Read(tag) // never fails (Go 1.24+)
	email := "trigger-" + hex.EncodeToString(tag) + "@example.com"
	user, err := svc.CreateUser(ctx, platformID, payments.NewUser{Name: "Trigger Test", Email: &email})
	if err != nil {
		return out, err
	}
	uid := user.UserID.String()
	out.UserID = uid
	switch typ {
	case payments.EventUserCreated:
		return out, nil
	case payments.EventUserVerificationSucceeded:
		return out, svc.VerifyUser(ctx, uid)
	case payments.EventUserVerificationFailed:
		return out, svc.FailUserVerification(ctx, uid, payments.VerificationFailure{Reason: "triggered by paymentsd webhook trigger"})
	case payments.EventBankAccountAdded:
		a, err := svc.AddBankAccount(ctx, platformID, payments.NewBankAccount{UserID: uid, BankName: "Trigger Test Bank",
			AccountNumber: "000123456789", RoutingNumber: "021000021", AccountType: "PERSONAL_CHECKING"})
		out.AccountID = &a.AccountID
		return out, err
	case payments.EventCardAdded, payments.EventCardDeleted:
		c, err := svc.AddCard(ctx, uid, payments.NewCard{Brand: "visa", Last4: "4242", ExpMonth: 12, ExpYear: svc.Now().Year() + 3})
		if err != nil {
			return out, err
		}
		out.CardID = &c.CardID
		if typ == payments.EventCardDeleted {
			_, err = svc.DeleteCard(ctx, platformID, uid, payments.CardDeletion{CardID: c.CardID.String()})
		}
		return out, err
	}
	// The rest are of a payee of the user.
	payee, err := svc.CreatePayee(ctx, payments.Caller{UserID: user.UserID, PlatformID: platformID}, payments.NewPayee{Name: "Trigger Payee"})
	if err != nil {
		return out, err
	}
	pid := payee.PayeeID.String()
	out.PayeeID = &payee.PayeeID
	switch typ {
	case payments.EventPayeeCreated:
		return out, nil
	case payments.EventPayeeUpdated:
		_, err := svc.UpdatePayee(ctx, platformID, uid, payments.PayeeRename{PayeeID: pid, Name: "Trigger Payee (renamed)"})
		return out, err
	case payments.EventPayeeAddressAdded:
		a, err := svc.AddPayeeAddress(ctx, uid, pid, payments.NewPayeeAddress{Name: "Trigger", AddressLine1: "1 Main St",
			City: "Pune", State: "MH", Zipcode: "411001", Country: "IN"})
		out.AddressID = &a.ID
		return out, err
	case payments.EventPayeeBankAdded, payments.EventPayeeBankDeleted:
		ifsc := "HDFC0001234"
		b, err := svc.AddPayeeBank(ctx, platformID, uid, payments.NewPayeeBank{PayeeID: pid, AccountNumber: "123456789012",
			Country: "IN", BankAccType: "savings", IdentifierValue: &ifsc})
		if err != nil {
			return out, err
		}
		out.BankID = &b.BankID
		if typ == payments.EventPayeeBankDeleted {
			err = svc.DeletePayeeBank(ctx, platformID, uid, b.BankID.String())
		}
		return out, err
	}
	return out, fmt.Errorf("webhook trigger: no change makes %s", typ) // every type is above: EventTypes' test keeps it so
}

// objectID is the id of the object the event of t.Type tells of.
func (t triggered) objectID() string {
	for _, id := range []*uuid.UUID{t.AddressID, t.BankID, t.CardID, t.AccountID} {
		if id != nil {
			return id.String()
		}
	}
	if t.PayeeID != nil {
		return t.PayeeID.String()
	}
	return t.UserID
}
