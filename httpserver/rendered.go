package httpserver

import (
	"bytes"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/cache"
)

// maxRenderedUsers bounds the users kept rendered: about 600 bytes an entry with the user
// beside its JSON, so at most some 10 MB, for the users read most.
const maxRenderedUsers = 16 << 10

// rendered is a success envelope whose data was encoded before: a handler returns it in
// place of a payments.Envelope, and it is written byte for byte as encoding/json writes
// that envelope, without encoding the data again.
type rendered struct {
	data []byte // the data's JSON, as writeJSON encodes it, without a newline
	at   int64  // queryGeneratedTime
}

// The envelope around rendered data: payments.Envelope's members in its order.
const (
	renderedHead = `{"success":true,"message":"Success","data":`
	renderedTail = `,"queryGeneratedTime":`
)

// writeRendered answers 200 with r's envelope.
func writeRendered(w http.ResponseWriter, r rendered) {
	e := encoders.Get().(*encoder)
	defer e.release()
	e.buf.Reset()
	e.buf.WriteString(renderedHead)
	e.buf.Write(r.data)
	e.buf.WriteString(renderedTail)
	e.buf.Write(strconv.AppendInt(e.buf.AvailableBuffer(), r.at, 10))
	e.buf.WriteString("}\n")
	writeBody(w, http.StatusOK, e.buf.Bytes())
}

// renderedUser is a user with its JSON.
type renderedUser struct {
	user payments.User
	json []byte
}

// renderedUsers keeps users' JSON, the greater part of encoding Get User's answer. An
// entry is a memo, not a cache of what is stored: it is used only for a user equal in
// every field to the one it was rendered from, which the library has just returned, so it
// cannot answer what the store no longer holds, whatever changes there and whoever
// changes it.
type renderedUsers struct {
	m *cache.Bounded[uuid.UUID, renderedUser]
}

// newRenderedUsers returns an empty memo of at most max users.
func newRenderedUsers(max int) renderedUsers {
	return renderedUsers{m: cache.New[uuid.UUID, renderedUser](max)}
}

// json returns u's JSON as writeJSON encodes it (without the newline), rendered before
// when u was. It keeps u: the caller must not change it.
func (r renderedUsers) json(u payments.User) []byte {
	if m, ok := r.m.Get(u.UserID); ok && sameUser(m.user, u) {
		return m.json
	}
	b := userJSON(u)
	r.m.Put(u.UserID, renderedUser{user: u, json: b})
	return b
}

// userJSON returns u's JSON as writeJSON encodes it (without the newline), written without
// reflection when every text of u is printable ASCII (what encoding/json writes as it is).
func userJSON(u payments.User) []byte {
	_, offset := u.CreatedAt.Zone()
	if year := u.CreatedAt.Year(); year < 0 || year > 9999 || offset%60 != 0 || offset <= -24*3600 || offset >= 24*3600 ||
		!plainText(u.Name) || !plainTextPtr(u.Email) || !plainTextPtr(u.PhoneCountryCode) || !plainTextPtr(u.Phone) {
		return bytes.TrimSuffix(encodeJSON(http.StatusOK, u), []byte("\n"))
	}
	b := make([]byte, 0, 160+len(u.Name))
	b = append(b, `{"pw_id":`...)
	b = strconv.AppendInt(b, u.PwID, 10)
	b = append(b, `,"user_id":"`...)
	b = append(b, u.UserID.String()...)
	b = append(b, `","name":"`...)
	b = append(b, u.Name...)
	b = append(b, '"')
	for _, f := range [...]struct {
		name  string
		value *string
	}{{`,"email":`, u.Email}, {`,"phone_country_code":`, u.PhoneCountryCode}, {`,"phone":`, u.Phone}} {
		b = append(b, f.name...)
		if f.value == nil {
			b = append(b, "null"...)
			continue
		}
		b = append(b, '"')
		b = append(b, *f.value...)
		b = append(b, '"')
	}
	b = append(b, `,"created_at":"`...)
	b = u.CreatedAt.AppendFormat(b, time.RFC3339Nano)
	return append(b, `"}`...)
}

// plainText reports whether s is written in JSON as it is, HTML characters unescaped
// (writeJSON's encoder): printable ASCII but the quote and the backslash.
func plainText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func plainTextPtr(s *string) bool { return s == nil || plainText(*s) }

// sameUser reports whether a and b are encoded alike: every field equal, pointers by what
// they point to, the creation times in the same location.
func sameUser(a, b payments.User) bool {
	return a.PwID == b.PwID && a.UserID == b.UserID && a.Name == b.Name &&
		sameText(a.Email, b.Email) && sameText(a.PhoneCountryCode, b.PhoneCountryCode) &&
		sameText(a.Phone, b.Phone) && a.CreatedAt == b.CreatedAt
}

func sameText(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
