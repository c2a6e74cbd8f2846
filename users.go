package payments

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/queries"
)

// Defaults of List Users and of a new user's wallet and settings. Field limits live in
// schema/users_*.json.
const (
	DefaultRowsPerPage = 10
	defaultCurrency    = "USD"
	defaultTimezone    = "UTC"
	defaultLanguage    = "en"
)

// User is a platform's user, as the API returns it.
type User struct {
	PwID             int64     `json:"pw_id"`
	UserID           uuid.UUID `json:"user_id"`
	Name             string    `json:"name"`
	Email            *string   `json:"email"`
	PhoneCountryCode *string   `json:"phone_country_code"`
	Phone            *string   `json:"phone"`
	CreatedAt        time.Time `json:"created_at"`
}

// NewUser is the body of Create User. A field left nil is absent, as a JSON null is.
type NewUser struct {
	Name             string  `json:"name"`
	Email            *string `json:"email,omitempty"`
	PhoneCountryCode *string `json:"phone_country_code,omitempty"`
	Phone            *string `json:"phone,omitempty"`
}

func (NewUser) requestSchema() string { return "users_create" }

// ListUsersParams is the body of List Users; zero values mean the defaults (10 rows, page 1),
// as a JSON null or a field left out does.
type ListUsersParams struct {
	RowsPerPage int `json:"rows_per_page,omitempty"`
	PageNo      int `json:"page_no,omitempty"`
}

func (ListUsersParams) requestSchema() string { return "users_list" }

// UserPage is one page of a platform's users, oldest first.
type UserPage struct {
	Records      []User
	TotalRecords int64
}

// userFromRow is the API's view of a stored user: the id and the time as Go values, and
// none of the columns the API never shows (row_id, platform_id, email_key, verified_at).
func userFromRow(r queries.User) (User, error) {
	created, err := parseTime(r.CreatedAt)
	return User{
		PwID:             r.PwID,
		UserID:           uuid.MustParse(r.ID),
		Name:             r.Name,
		Email:            r.Email,
		PhoneCountryCode: r.PhoneCountryCode,
		Phone:            r.Phone,
		CreatedAt:        created,
	}, err
}

// CreateUser creates a user of the platform together with its wallet and default settings,
// in one transaction.
//
// Returns CodeInvalid when the body fails validation and CodeConflict when the platform
// already has a user with this email (compared case-insensitively).
//
// Options: WithKey, with which it creates the user at most once, and Validated.
func (s *Service) CreateUser(ctx context.Context, platformID uuid.UUID, in NewUser, opts ...Call) (User, error) {
	c := options(opts)
	return once(ctx, s, c.key, platformScope(platformID), "CreateUser", in, func(a *attempt) (User, error) {
		return s.createUser(ctx, a, c.validated, platformID, in)
	})
}

func (s *Service) createUser(ctx context.Context, a *attempt, v *Validation, platformID uuid.UUID, in NewUser) (User, error) {
	_, err := s.validateValue(v, in.requestSchema(), nil, nil, in)
	if err != nil {
		return User{}, err
	}
	id := s.newID().String()
	var emailKey *string
	if in.Email != nil {
		emailKey = new(strings.ToLower(*in.Email))
	}
	var u User
	// pw_id is the user's number within the platform, 1, 2, 3...: the platform's user
	// count, raised as the user is written, which locks the platform's row until the
	// write commits (the platform's creates share the lock key: one batch at a time takes
	// them all, and writes them together). The clock is read when the user's turn comes,
	// and the store times the user no earlier than the one before, so that creation times
	// follow the creation order List Users pages by, however many instances create users.
	opts := store.WriteOptions{LockKey: platformScope(platformID)}
	rows := func() store.NewUserRows {
		return store.NewUserRows{
			User: queries.CreateUserParams{
				ID:               id,
				PlatformID:       platformID.String(),
				Name:             in.Name,
				Email:            in.Email,
				EmailKey:         emailKey,
				PhoneCountryCode: in.PhoneCountryCode,
				Phone:            in.Phone,
				CreatedAt:        formatTime(s.Now()),
			},
			Wallet: queries.CreateWalletParams{ID: s.newID().String(), Currency: defaultCurrency},
			Settings: queries.CreateUserSettingsParams{
				Currency:             defaultCurrency,
				Timezone:             defaultTimezone,
				Language:             defaultLanguage,
				NotificationsEnabled: 1,
				TwoFactorEnabled:     0,
			},
		}
	}
	err = s.createUserRemembering(ctx, opts, rows, a, func() any { return u }, func(ctx context.Context, q store.Querier, row queries.User) (err error) {
		if u, err = userFromRow(row); err != nil {
			return err
		}
		return s.emit(ctx, q, platformID.String(), s.env, EventUserCreated, EventData{Object: EventObject{Type: "user", ID: id}})
	})
	if err != nil {
		return User{}, notFound(s.storeError(err), "Platform not found.")
	}
	return u, nil
}

// ListUsers returns one page of the platform's users in creation order, and the
// platform's total. A page past the end is empty. Each page is an index range lookup,
// so a deep page costs what the first does.
//
// Returns CodeInvalid when the parameters fail validation.
//
// Options: Validated.
func (s *Service) ListUsers(ctx context.Context, platformID uuid.UUID, in ListUsersParams, opts ...Call) (UserPage, error) {
	if _, err := s.validateValue(options(opts).validated, in.requestSchema(), nil, nil, in); err != nil {
		return UserPage{}, err
	}
	rows, page := int64(in.RowsPerPage), int64(in.PageNo)
	if rows == 0 {
		rows = DefaultRowsPerPage
	}
	if page == 0 {
		page = 1
	}
	out := UserPage{Records: []User{}}
	// One snapshot: under concurrent creates the total read apart from the page could
	// count fewer users than the page shows.
	err := s.read(ctx, func(q store.Querier) error {
		p, err := q.GetPlatform(ctx, platformID.String())
		if err != nil {
			return notFound(err, "Platform not found.")
		}
		out.TotalRecords = p.UserCount
		list, err := q.ListUsersPage(ctx, queries.ListUsersPageParams{
			PlatformID: platformID.String(),
			AfterPwID:  (page - 1) * rows,
			PageSize:   rows,
		})
		if err != nil {
			return err
		}
		for _, r := range list {
			u, err := userFromRow(r)
			if err != nil {
				return err
			}
			out.Records = append(out.Records, u)
		}
		return nil
	})
	if err != nil {
		return UserPage{}, err
	}
	return out, nil
}

// GetUser returns a user of the platform.
//
// Returns CodeInvalid for a malformed id and CodeNotFound when the platform has no such
// user.
func (s *Service) GetUser(ctx context.Context, platformID uuid.UUID, userID string) (User, error) {
	if _, err := s.validate("users_get", map[string]string{"user_id": userID}, nil, nil); err != nil {
		return User{}, err
	}
	key := userKey{platform: platformID, user: uuid.MustParse(userID)}
	if u, ok := s.users.Get(key); ok && !s.plain.userCache {
		return u.detached(), nil
	}
	var u User
	err := s.query(ctx, func(q store.Querier) error {
		r, err := s.platformUser(ctx, q, platformID, userID)
		if err != nil {
			return err
		}
		u, err = userFromRow(r)
		return err
	})
	if err != nil {
		return User{}, err // not found is never cached: another process may create it
	}
	s.users.Put(key, u)
	return u.detached(), nil
}

// userKey is a user of a platform: what the user cache is keyed by, so a user is found
// only through its own platform.
type userKey struct {
	platform, user uuid.UUID
}

// detached returns a copy of u that shares no memory with it: a caller changing what
// it got back cannot change the cached user.
func (u User) detached() User {
	if u.Email == nil && u.PhoneCountryCode == nil && u.Phone == nil {
		return u
	}
	own := new([3]string) // the copies in one allocation, not one each
	for i, p := range []**string{&u.Email, &u.PhoneCountryCode, &u.Phone} {
		if *p != nil {
			own[i] = **p
			*p = &own[i]
		}
	}
	return u
}

// VerifyUser marks a user identity-verified (identity verification itself happens outside
// this service), telling the user's platform (user.verification.succeeded). Verifying a
// verified user changes nothing. It is an administrative operation: it is not scoped to
// a platform.
//
// Returns CodeInvalid for a malformed id and CodeNotFound for an unknown user.
func (s *Service) VerifyUser(ctx context.Context, userID string) error {
	uid, err := parseID(userID, "user")
	if err != nil {
		return err
	}
	return s.write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
		u, err := q.GetUser(ctx, uid)
		if err != nil {
			return notFound(err, "User not found.")
		}
		// Only the call that verifies tells of it, however many run at once.
		if n, err := q.VerifyUser(ctx, queries.VerifyUserParams{ID: uid, VerifiedAt: new(formatTime(s.Now()))}); err != nil || n == 0 {
			return err
		}
		return s.emitFor(ctx, q, u.PlatformID, EventUserVerificationSucceeded, EventData{Object: EventObject{Type: "user", ID: uid}})
	})
}

// VerificationFailure is the body of a failed identity verification: why it failed.
type VerificationFailure struct {
	Reason string `json:"reason"`
}

// FailUserVerification records that a user's identity verification failed, and why,
// telling the user's platform (user.verification.failed). It changes nothing else about
// the user: a verified user stays verified. It is an administrative operation.
//
// Returns CodeInvalid for a malformed id or reason and CodeNotFound for an unknown user.
func (s *Service) FailUserVerification(ctx context.Context, userID string, in VerificationFailure) error {
	if _, err := s.validate("users_verification_failed", map[string]string{"user_id": userID}, nil, in); err != nil {
		return err
	}
	uid := canonicalID(userID)
	return s.write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
		u, err := q.GetUser(ctx, uid)
		if err != nil {
			return notFound(err, "User not found.")
		}
		return s.emitFor(ctx, q, u.PlatformID, EventUserVerificationFailed, EventData{Object: EventObject{Type: "user", ID: uid}, Reason: in.Reason})
	})
}
