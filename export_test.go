package payments

// Internals the external tests use to check what the store holds.

// NewKeyring makes a keyring of keys, the newest first.
var NewKeyring = newKeyring

// Seal seals plain under the ring's newest key, bound to aad.
func Seal(r *keyring, plain, aad string) string { return r.seal([]byte(plain), aad) }

// Unseal opens a value sealed under one of the ring's keys with aad.
func Unseal(r *keyring, sealed, aad string) (string, error) {
	b, err := r.open(sealed, aad)
	return string(b), err
}

// SealedKeyID returns the id of the key that sealed a value.
var SealedKeyID = sealedKeyID

// BlindIndex returns the blind index function of a blind-index key.
func BlindIndex(root []byte) func(userID, routingNumber, accountNumber string) []byte {
	return newBlindIndex(root).bankAccount
}

// The associated data each sealed column binds its values to.
var (
	PlatformSecretAAD    = platformSecretAAD
	BankAccountNumberAAD = bankAccountNumberAAD
	PayeeBankNumberAAD   = payeeBankNumberAAD
)

// Unseal opens a value the service stored sealed, with the service's keys.
func (s *Service) Unseal(sealed, aad string) (string, error) { return Unseal(s.keys, sealed, aad) }

// AccountIndex is the blind index the service computes for a linked account number.
func (s *Service) AccountIndex(userID, routingNumber, accountNumber string) []byte {
	return s.index.bankAccount(userID, routingNumber, accountNumber)
}

// Validations returns how many requests the service has validated against their schemas.
func Validations(s *Service) int64 { return s.schemas.validations.Load() }
