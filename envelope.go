package payments

import (
	"errors"
	"fmt"

	"github.com/platform-payments/payments/internal/validate"
)

// Code classifies an error. The HTTP layer maps each code to one status and nothing else
// decides a status.
type Code string

// Error codes.
const (
	CodeInvalid      Code = "invalid"      // the request fails validation (422)
	CodeUnauthorized Code = "unauthorized" // authentication failed (401)
	CodeForbidden    Code = "forbidden"    // authenticated, but not allowed yet (403)
	CodeNotFound     Code = "not_found"    // absent for this caller (404)
	CodeConflict     Code = "conflict"     // clashes with what is stored (409)
	CodeInternal     Code = "internal"     // a fault of ours (500)
	CodeUnavailable  Code = "unavailable"  // the database cannot be reached for now: retry later (503)
)

// Error is the one error type of the service. Operations return it for every outcome a
// caller can act on; anything else is an internal fault.
type Error struct {
	Code    Code
	Message string
	// Fields holds the validation failures of a CodeInvalid error, in the order the API
	// reports them.
	Fields []FieldError
	// cause is what a CodeUnavailable error stands for (the database's own error): for
	// the logs and errors.Is, never for the client.
	cause error
}

func (e *Error) Error() string {
	if len(e.Fields) > 0 {
		f := e.Fields[0]
		return fmt.Sprintf("payments: %s: %v: %s (and %d more)", e.Code, f.Loc, f.Msg, len(e.Fields)-1)
	}
	if e.cause != nil {
		return fmt.Sprintf("payments: %s: %s: %v", e.Code, e.Message, e.cause)
	}
	return fmt.Sprintf("payments: %s: %s", e.Code, e.Message)
}

// Unwrap returns the error e stands for, if any.
func (e *Error) Unwrap() error { return e.cause }

// FieldError is one validation failure, shaped as a pydantic v2 error entry so that the
// 422 body of the HTTP API is the list of these as they are.
// Its fields: Type, Loc, Msg, Input and Ctx (left out of the JSON when empty).
type FieldError = validate.FieldError

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err: the code of an *Error in its chain, "" for nil, and
// CodeInternal for anything else.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// ErrorMessage returns the message of the *Error in err's chain; for any other error it
// returns a generic text, so internal details never reach a client.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}

// Envelope is the common response body of every endpoint but List Users.
type Envelope struct {
	Success            bool   `json:"success"`
	Message            string `json:"message"`
	Data               any    `json:"data"`
	QueryGeneratedTime int64  `json:"queryGeneratedTime"`
}

// UserListEnvelope is the response body of List Users.
type UserListEnvelope struct {
	Success            bool   `json:"success"`
	StatusCode         int    `json:"status_code"`
	Message            string `json:"message"`
	Records            []User `json:"records"`
	TotalRecords       int64  `json:"totalRecords"`
	QueryGeneratedTime int64  `json:"queryGeneratedTime"`
}

// ValidationBody is the body of a 422 response.
type ValidationBody struct {
	Detail []FieldError `json:"detail"`
}
