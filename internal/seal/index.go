package seal

import (
	"crypto/hmac"
	"crypto/sha256"
)

// BlindIndex computes the blind index of bank account numbers: HMAC-SHA256 under a key
// derived from the database's blind-index key. That key is random, not any data key, and
// kept sealed by its owner, so an index does not change when the data keys do. Equal
// numbers have equal indexes, which a unique constraint can hold, and the index shows
// nothing of the number to whoever has no key.
type BlindIndex struct {
	key []byte
}

// NewBlindIndex returns the index under the blind-index key root (32 random bytes).
func NewBlindIndex(root []byte) *BlindIndex {
	return &BlindIndex{key: derive(root, labelBlindIndex, 32)}
}

// BankAccount returns the index of a linked account number: the user and the routing
// number are in the message too, so equal numbers of different users or banks do not
// share an index. The number is used as validated (digits only, nothing to normalise):
// two numbers are the same account when they are the same digits, as before sealing.
func (b *BlindIndex) BankAccount(userID, routingNumber, accountNumber string) []byte {
	mac := hmac.New(sha256.New, b.key)
	mac.Write([]byte(userID + "\x00" + routingNumber + "\x00" + accountNumber))
	return mac.Sum(nil)
}
