package httpserver

import (
	"bytes"
	"net/http"
	"strconv"

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
	b := bytes.TrimSuffix(encodeJSON(http.StatusOK, u), []byte("\n"))
	r.m.Put(u.UserID, renderedUser{user: u, json: b})
	return b
}

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
