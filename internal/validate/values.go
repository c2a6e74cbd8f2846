package validate

import "reflect"

// Request values (the structs a request body decodes into) as a validated request
// (payments.Validation) keeps and compares them: what it validated, and what an operation
// is then given.

// CopyValue returns a copy of a request value that shares no memory with it: each pointer
// field points to a copy of its own, each slice field is a slice of its own. Request
// values are flat (exported fields of strings, numbers and booleans, pointers to them, or
// slices of them, as NewWebhookEndpoint's events), so that is a deep copy.
func CopyValue(v reflect.Value) reflect.Value {
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	for i := range c.NumField() {
		switch f := c.Field(i); {
		case f.Kind() == reflect.Pointer && !f.IsNil():
			p := reflect.New(f.Type().Elem())
			p.Elem().Set(f.Elem())
			f.Set(p)
		case f.Kind() == reflect.Slice && !f.IsNil():
			s := reflect.MakeSlice(f.Type(), f.Len(), f.Len())
			reflect.Copy(s, f)
			f.Set(s)
		}
	}
	return c
}

// EqualValues reports whether a and b, request values, are equal: of one type, and each
// field equal, a pointer field by what it points to, a slice field element by element (a
// nil slice equals only a nil one: left out is not empty).
func EqualValues(a, b reflect.Value) bool {
	if !a.IsValid() || !b.IsValid() || a.Type() != b.Type() {
		return false
	}
	for i := range a.NumField() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Kind() == reflect.Pointer {
			if fa.IsNil() || fb.IsNil() {
				if fa.IsNil() != fb.IsNil() {
					return false
				}
				continue
			}
			fa, fb = fa.Elem(), fb.Elem()
		}
		if fa.Kind() == reflect.Slice {
			if !equalSlices(fa, fb) {
				return false
			}
			continue
		}
		if !fa.Equal(fb) {
			return false
		}
	}
	return true
}

// equalSlices reports whether two slices of comparable elements are equal.
func equalSlices(a, b reflect.Value) bool {
	if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
		return false
	}
	for i := range a.Len() {
		if !a.Index(i).Equal(b.Index(i)) {
			return false
		}
	}
	return true
}
