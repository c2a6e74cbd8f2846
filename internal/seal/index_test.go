package seal_test

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/platform-payments/payments/internal/seal"
)

func TestBlindIndex(t *testing.T) {
	root := bytes.Repeat([]byte{7}, 32)
	index := seal.NewBlindIndex(root).BankAccount
	const user, routing, number = "0198f0c2-0000-7000-8000-000000000001", "021000021", "000123456789"
	first := index(user, routing, number)
	// The index of before the move: stored indexes depend on every byte of it.
	const want = "e0c23b7f9c708738a821e33ed3c11f721661807f1f7f8d2db2ee4a7f6a4dfde5"
	if got := hex.EncodeToString(first); got != want {
		t.Fatalf("index %s, want %s (HMAC-SHA256, 32 bytes)", got, want)
	}
	t.Run("OKStable", func(t *testing.T) {
		if again := seal.NewBlindIndex(bytes.Clone(root)).BankAccount(user, routing, number); !bytes.Equal(again, first) {
			t.Errorf("index %x, then %x", first, again)
		}
	})
	for _, tc := range []struct {
		name  string
		other []byte
	}{
		{"OtherNumber", index(user, routing, "000123456788")},
		{"OtherRouting", index(user, "011000015", number)},
		{"OtherUser", index("0198f0c2-0000-7000-8000-000000000002", routing, number)},
		{"OtherKey", seal.NewBlindIndex(bytes.Repeat([]byte{8}, 32)).BankAccount(user, routing, number)},
		{"NoFieldBleeding", index(user, routing+"0", number[1:])},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if bytes.Equal(tc.other, first) {
				t.Errorf("same index %x", first)
			}
		})
	}
	t.Run("NotThePlainHash", func(t *testing.T) {
		if strings.Contains(hex.EncodeToString(first), number) {
			t.Error("the index shows the number")
		}
	})
}
