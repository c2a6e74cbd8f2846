package validate

import "reflect"

// Request values (the structs a request body decodes into) as a service scoped to a
// decoded request keeps and compares them: what it validated, and what an operation is
// then given.

// CopyValue returns a copy of a request value that shares no memory with it: each pointer
// field points to a copy of its own. Request values are flat (exported fields of strings,
// numbers and booleans, or pointers to them), so that is a deep copy.
func CopyValue(v reflect.Value) reflect.Value {
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	for i := range c.NumField() {
		if f := c.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			p := reflect.New(f.Type().Elem())
			p.Elem().Set(f.Elem())
			f.Set(p)
		}
	}
	return c
}

// EqualValues reports whether a and b, request values, are equal: of one type, and each
// field equal, a pointer field by what it points to.
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
		if !fa.Equal(fb) {
			return false
		}
	}
	return true
}
