package httpserver_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/httpserver"
)

// BenchmarkBankAccounts measures Add Bank Account (a write: the full number is sealed and
// its blind index computed) and Get Bank Account (a read: the sealed number is opened for
// its last four digits), through the library and through the handler. It uses the
// public API alone, so that it runs unchanged on a version before encryption at rest:
//
//	go test -run '^$' -bench BankAccounts -benchtime 2000x ./httpserver
func BenchmarkBankAccounts(b *testing.B) {
	ctx := context.Background()
	svc, platform := freshService(b)
	email := "ada@example.com"
	user, err := svc.CreateUser(ctx, platform.PlatformID, payments.NewUser{Name: "Ada", Email: &email})
	if err != nil {
		b.Fatal(err)
	}
	if err := svc.VerifyUser(ctx, user.UserID.String()); err != nil {
		b.Fatal(err)
	}
	client := benchClient{h: httpserver.New(svc, nil), platform: platform}
	const routing = "021000021"
	added := 0 // across sub-benchmarks and their runs: every number is new
	var accountIDs []string

	b.Run("add/library", func(b *testing.B) {
		numbers := make([]string, b.N)
		for i := range numbers {
			added++
			numbers[i] = fmt.Sprintf("%012d", added)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			a, err := svc.AddBankAccount(ctx, platform.PlatformID, payments.NewBankAccount{UserID: user.UserID.String(),
				BankName: "Chase", AccountNumber: numbers[i], RoutingNumber: routing, AccountType: "PERSONAL_CHECKING"})
			if err != nil {
				b.Fatal(err)
			}
			accountIDs = append(accountIDs, a.AccountID.String())
		}
		reportThroughput(b)
	})

	b.Run("add/handler", func(b *testing.B) {
		const target = "/api/platform/accounts/add-account"
		bodies := make([][]byte, b.N)
		signatures := make([]string, b.N)
		for i := range bodies {
			added++
			bodies[i] = fmt.Appendf(nil, `{"user_id":%q,"bank_name":"Chase","account_number":"%012d","routing_number":%q,"account_type":"PERSONAL_CHECKING"}`,
				user.UserID.String(), added, routing)
			signatures[i] = payments.Sign(platform.Secret, http.MethodPost, target, bodies[i])
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			client.do(b, http.MethodPost, target, bodies[i], signatures[i])
		}
		reportThroughput(b)
	})

	b.Run("get/library", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			if _, err := svc.GetBankAccount(ctx, platform.PlatformID, accountIDs[i%len(accountIDs)]); err != nil {
				b.Fatal(err)
			}
		}
		reportThroughput(b)
	})

	b.Run("get/handler", func(b *testing.B) {
		n := min(b.N, len(accountIDs))
		targets := make([]string, n)
		signatures := make([]string, n)
		for i := range n {
			targets[i] = "/api/platform/accounts/get-account/" + accountIDs[i]
			signatures[i] = payments.Sign(platform.Secret, http.MethodGet, targets[i], nil)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			client.do(b, http.MethodGet, targets[i%n], nil, signatures[i%n])
		}
		reportThroughput(b)
	})
}
