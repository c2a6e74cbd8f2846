// Package stored writes values as the payments database stores them: times in one
// fixed-width layout that sorts as text, and text that every engine takes.
package stored

import (
	"fmt"
	"strings"
	"time"
)

// layout is how timestamps are stored: fixed width, so that they sort as text.
const layout = "2006-01-02T15:04:05.000000Z"

// Time returns t as it is stored.
func Time(t time.Time) string { return t.UTC().Format(layout) }

// ParseTime reads a timestamp written by Time; one that does not parse is a damaged row,
// an internal fault.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(layout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("payments: a stored time: %w", err)
	}
	return t, nil
}

// ParseNullTime reads a timestamp of a column that may be NULL.
func ParseNullTime(s *string) (*time.Time, error) {
	if s == nil {
		return nil, nil
	}
	t, err := ParseTime(*s)
	return &t, err
}

// Text returns s as every engine can store it: bytes that are not UTF-8 become U+FFFD,
// and a NUL is dropped.
func Text(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
}
