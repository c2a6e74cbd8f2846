package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"

	"github.com/platform-payments/payments/internal/command"
)

// The setup of each bench operation, in the order of benchOps: it makes through the API,
// or reads from its flags, what the op needs, checks it with one request where a wrong
// flag would otherwise show only as a status count, and returns the op's request maker.

// accountRouting is a routing number that passes the ABA checksum.
const accountRouting = "021000021"

// payeeBankFill is how many times the run's duration delete-payee-bank spends adding the
// payee banks it deletes: deleting one costs about as much as adding one, so twice leaves
// room.
const payeeBankFill = 2

func (b *bencher) createUsers(context.Context) (nextRequest, error) {
	return b.newUser, nil
}

func (b *bencher) createPayees(ctx context.Context) (nextRequest, error) {
	return b.newPayee, b.call(ctx, "making a payee with -api-key", b.newPayee, nil)
}

func (b *bencher) updatePayee(ctx context.Context) (nextRequest, error) {
	user, payee, err := b.madePayee(ctx)
	if err != nil {
		return nil, err
	}
	target := "/api/platform/payee/update/" + user
	next := func(int) (*http.Request, error) {
		body := fmt.Appendf(nil, `{"payee_id":%q,"name":"Bench Payee %d"}`, payee, b.seq.Add(1))
		return b.signed(http.MethodPut, target, body)
	}
	return next, b.call(ctx, "renaming a payee of -user (is -user the user of -api-key?)", next, nil)
}

func (b *bencher) addAccounts(ctx context.Context) (nextRequest, error) {
	user, err := b.madeUser(ctx)
	if err != nil {
		return nil, err
	}
	return func(int) (*http.Request, error) {
		body := fmt.Appendf(nil, `{"user_id":%q,"bank_name":"Bench Bank","account_number":"%012d",`+
			`"routing_number":%q,"account_type":"PERSONAL_CHECKING","is_default":false}`, user, b.seq.Add(1), accountRouting)
		return b.signed(http.MethodPost, "/api/platform/accounts/add-account", body)
	}, nil
}

func (b *bencher) deleteCards(ctx context.Context) (nextRequest, error) {
	f, err := os.Open(b.fix.cards) // #nosec G304 -- the operator's own file of card ids
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cards pool[[2]string] // user, card
	lines := bufio.NewScanner(f)
	for n := 1; lines.Scan(); n++ {
		if len(bytes.TrimSpace(lines.Bytes())) == 0 {
			continue
		}
		user, card, ok := idPair(lines.Text())
		if !ok {
			return nil, fmt.Errorf("%s:%d: want USER_ID/CARD_ID, got %q", b.fix.cards, n, lines.Text())
		}
		cards.items = append(cards.items, [2]string{user, card})
	}
	if err := lines.Err(); err != nil {
		return nil, err
	}
	if len(cards.items) == 0 {
		return nil, fmt.Errorf("%s lists no card", b.fix.cards)
	}
	next := func(int) (*http.Request, error) {
		card, err := cards.take()
		if err != nil {
			return nil, err
		}
		return b.signed(http.MethodDelete, "/api/platform/card/delete/"+card[0], fmt.Appendf(nil, `{"card_id":%q}`, card[1]))
	}
	return next, b.call(ctx, "deleting the first card of -cards (a card of the platform, not deleted yet)", next, nil)
}

// newPayeeBank returns the maker of Add Payee Bank requests for the user's payee, each
// with a new account number: an Indian savings account.
func (b *bencher) newPayeeBank(user, payee string) nextRequest {
	target := "/api/platform/cross-border/payee/bank/" + user
	return func(int) (*http.Request, error) {
		body := fmt.Appendf(nil, `{"payee_id":%q,"account_number":"%012d","country":"IN",`+
			`"bank_acc_type":"savings","identifier_value":"SBIN0001234"}`, payee, b.seq.Add(1))
		return b.signed(http.MethodPost, target, body)
	}
}

func (b *bencher) addPayeeBanks(ctx context.Context) (nextRequest, error) {
	user, payee, err := b.madePayee(ctx)
	if err != nil {
		return nil, err
	}
	next := b.newPayeeBank(user, payee)
	return next, b.call(ctx, "adding a bank for a payee of -user (is -user the user of -api-key?)", next, nil)
}

func (b *bencher) deletePayeeBanks(ctx context.Context) (nextRequest, error) {
	user, payee, err := b.madePayee(ctx)
	if err != nil {
		return nil, err
	}
	banks, err := b.fill(ctx, b.newPayeeBank(user, payee))
	if err != nil {
		return nil, err
	}
	return func(int) (*http.Request, error) {
		bank, err := banks.take()
		if err != nil {
			return nil, err
		}
		return b.signed(http.MethodDelete, "/api/platform/cross-border/payee/bank/"+user+"/"+bank, nil)
	}, nil
}

// fill adds payee banks from the run's clients, -banks of them or, without -banks, for
// payeeBankFill times the run's duration, and returns them.
func (b *bencher) fill(parent context.Context, add nextRequest) (*pool[string], error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	// Without -banks, adding stops when the time is up, but only once every client has
	// added one: on a slow machine a first add may take longer than the time given.
	budget := ctx
	if b.fix.banks == 0 {
		var stop context.CancelFunc
		budget, stop = context.WithTimeout(ctx, payeeBankFill*b.duration)
		defer stop()
	}
	var (
		mu       sync.Mutex
		banks    pool[string]
		firstErr error
		wg       sync.WaitGroup
		left     atomic.Int64
	)
	left.Store(int64(b.fix.banks))
	for range b.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for added := 0; ctx.Err() == nil; added++ {
				if b.fix.banks > 0 && left.Add(-1) < 0 || b.fix.banks == 0 && added > 0 && budget.Err() != nil {
					break
				}
				var bank struct {
					BankID string `json:"bank_id"`
				}
				err := b.call(ctx, "adding the payee banks to delete (is -user the user of -api-key?)", add, &bank)
				mu.Lock()
				if err == nil {
					banks.items = append(banks.items, bank.BankID)
				} else if ctx.Err() == nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return &banks, parent.Err()
}

func (b *bencher) getUser(ctx context.Context) (nextRequest, error) {
	user, err := b.madeUser(ctx)
	if err != nil {
		return nil, err
	}
	next := b.reading("/api/platform/users/get/" + user)
	return next, b.call(ctx, "reading the user made", next, nil)
}

func (b *bencher) listUsers(ctx context.Context) (nextRequest, error) {
	body := []byte(`{"rows_per_page":10,"page_no":1}`)
	next := func(int) (*http.Request, error) { return b.signed(http.MethodPost, "/api/platform/users/list", body) }
	return next, b.call(ctx, "listing the users", next, nil)
}

func (b *bencher) getAccount(ctx context.Context) (nextRequest, error) {
	account, err := uuidFlag("account", b.fix.account)
	if err != nil {
		return nil, err
	}
	next := b.reading("/api/platform/accounts/get-account/" + account)
	return next, b.call(ctx, "reading -account (an account of an identity-verified user)", next, nil)
}

func (b *bencher) listAddresses(ctx context.Context) (nextRequest, error) {
	user, err := uuidFlag("user", b.fix.user)
	if err != nil {
		return nil, err
	}
	next := b.reading("/api/platform/cross-border/payee/addresses/" + user)
	var addresses []json.RawMessage
	if err := b.call(ctx, "listing the payee addresses of -user", next, &addresses); err != nil {
		return nil, err
	}
	if len(addresses) == 0 {
		return nil, fmt.Errorf("-user %s has no payee address to read: store one with paymentsd address add", user)
	}
	return next, nil
}

func (b *bencher) getAddress(ctx context.Context) (nextRequest, error) {
	user, address, ok := idPair(b.fix.address)
	if !ok {
		return nil, command.Usagef("-address %q: want USER_ID/ADDRESS_ID", b.fix.address)
	}
	next := b.reading("/api/platform/cross-border/payee/address/" + user + "/" + address)
	return next, b.call(ctx, "reading -address", next, nil)
}

func (b *bencher) getRules(ctx context.Context) (nextRequest, error) {
	next := b.reading("/api/platform/cross-border/payee-rules?country_code=" + url.QueryEscape(b.fix.country) +
		"&payout_currency=" + url.QueryEscape(b.fix.payout))
	return next, b.call(ctx, "reading the payee rules of -country and -payout", next, nil)
}

func (b *bencher) getRates(ctx context.Context) (nextRequest, error) {
	next := b.reading("/api/platform/cross-border/rates?payout_currency=" + url.QueryEscape(b.fix.payout))
	var rates []json.RawMessage
	if err := b.call(ctx, "reading the exchange rates of -payout", next, &rates); err != nil {
		return nil, err
	}
	if len(rates) == 0 {
		return nil, fmt.Errorf("no exchange rate for %s is in force: set one with paymentsd rates set -base USD -payout %s -rate 83.12",
			b.fix.payout, b.fix.payout)
	}
	return next, nil
}
