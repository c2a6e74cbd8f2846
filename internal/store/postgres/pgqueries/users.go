package pgqueries

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/queries"
)

// CreateUserRows writes a user, its wallet and its settings in one statement (the query
// CreateUserRows): under a platform's counter lock, every round trip saved is one less
// wait for every create after it.
func (a Adapter) CreateUserRows(ctx context.Context, u store.NewUserRows) (queries.User, error) {
	r, err := a.Q.CreateUserRows(ctx, CreateUserRowsParams{
		PlatformID: u.User.PlatformID, CreatedAt: u.User.CreatedAt, ID: u.User.ID, Name: u.User.Name,
		Email: u.User.Email, EmailKey: u.User.EmailKey, PhoneCountryCode: u.User.PhoneCountryCode, Phone: u.User.Phone,
		WalletID: u.Wallet.ID, WalletCurrency: u.Wallet.Currency,
		SettingsCurrency: u.Settings.Currency, Timezone: u.Settings.Timezone, Language: u.Settings.Language,
		NotificationsEnabled: u.Settings.NotificationsEnabled, TwoFactorEnabled: u.Settings.TwoFactorEnabled,
	})
	return queries.User(r), err
}

// newUserJSON is a user as CreateUsersRows reads it.
type newUserJSON struct {
	ID                   string  `json:"id"`
	Name                 string  `json:"name"`
	Email                *string `json:"email"`
	EmailKey             *string `json:"email_key"`
	PhoneCountryCode     *string `json:"phone_country_code"`
	Phone                *string `json:"phone"`
	CreatedAt            string  `json:"created_at"`
	WalletID             string  `json:"wallet_id"`
	WalletCurrency       string  `json:"wallet_currency"`
	SettingsCurrency     string  `json:"settings_currency"`
	Timezone             string  `json:"timezone"`
	Language             string  `json:"language"`
	NotificationsEnabled int64   `json:"notifications_enabled"`
	TwoFactorEnabled     int64   `json:"two_factor_enabled"`
	Ord                  int64   `json:"ord"`
}

// CreateUsersRows is CreateUserRows for users of one platform, in their order, in two
// statements (CountNewUsers, then WriteCountedUsers) however many they are: the users as
// stored, in the same order, or sql.ErrNoRows, having written nothing, when the platform
// does not exist.
func (a Adapter) CreateUsersRows(ctx context.Context, platformID string, users []store.NewUserRows) ([]queries.User, error) {
	if _, err := a.Q.CountNewUsers(ctx, CountNewUsersParams{PlatformID: platformID, Count: int64(len(users))}); err != nil {
		return nil, err
	}
	return a.WriteCountedUsers(ctx, platformID, users)
}

// WriteCountedUsers writes users of one platform, in their order, once CountNewUsers has
// raised the platform's count by as many in this transaction (the two may go to the
// server together), and returns them as stored, in the same order. Its error says how
// many it wrote when the platform does not exist (none).
func (a Adapter) WriteCountedUsers(ctx context.Context, platformID string, users []store.NewUserRows) ([]queries.User, error) {
	given := make([]newUserJSON, len(users))
	for i, u := range users {
		given[i] = newUserJSON{
			ID: u.User.ID, Name: u.User.Name, Email: u.User.Email, EmailKey: u.User.EmailKey,
			PhoneCountryCode: u.User.PhoneCountryCode, Phone: u.User.Phone, CreatedAt: u.User.CreatedAt,
			WalletID: u.Wallet.ID, WalletCurrency: u.Wallet.Currency,
			SettingsCurrency: u.Settings.Currency, Timezone: u.Settings.Timezone, Language: u.Settings.Language,
			NotificationsEnabled: u.Settings.NotificationsEnabled, TwoFactorEnabled: u.Settings.TwoFactorEnabled,
			Ord: int64(i + 1),
		}
	}
	raw, err := json.Marshal(given)
	if err != nil {
		return nil, err
	}
	rows, err := a.Q.CreateUsersRows(ctx, CreateUsersRowsParams{PlatformID: platformID, Users: raw})
	if err != nil {
		return nil, err
	}
	if len(rows) != len(users) {
		return nil, fmt.Errorf("payments: %d users written of %d", len(rows), len(users))
	}
	byID := make(map[string]queries.User, len(rows))
	for _, r := range rows {
		byID[r.ID] = queries.User(r)
	}
	out := make([]queries.User, len(users))
	for i, u := range users {
		r, ok := byID[u.User.ID]
		if !ok {
			return nil, fmt.Errorf("payments: user %s not written", u.User.ID)
		}
		out[i] = r
	}
	return out, nil
}
