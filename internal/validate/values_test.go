package validate_test

import (
	"reflect"
	"testing"

	"github.com/platform-payments/payments/internal/validate"
)

type flat struct {
	Name  string
	Email *string
	N     int
}

// A copy shares no memory with its original, and equality follows pointers.
func TestCopyValueEqualValues(t *testing.T) {
	email := "ada@example.com"
	v := flat{Name: "Ada", Email: &email, N: 1}
	c := validate.CopyValue(reflect.ValueOf(v))
	if !validate.EqualValues(reflect.ValueOf(v), c) {
		t.Fatal("a copy is not equal to its original")
	}
	email = "eve@example.com" // through the original's pointer
	if validate.EqualValues(reflect.ValueOf(v), c) {
		t.Fatal("the copy changed with its original: it shares the pointed-to value")
	}
	other := "eve@example.com"
	tests := []struct {
		name string
		a, b any
		want bool
	}{
		{"SamePointedValue", flat{Email: &email}, flat{Email: &other}, true},
		{"NilAndNot", flat{Email: nil}, flat{Email: &other}, false},
		{"BothNil", flat{N: 2}, flat{N: 2}, true},
		{"OtherField", flat{N: 2}, flat{N: 3}, false},
		{"OtherType", flat{}, struct{ Name string }{}, false},
	}
	for _, tt := range tests {
		if got := validate.EqualValues(reflect.ValueOf(tt.a), reflect.ValueOf(tt.b)); got != tt.want {
			t.Errorf("%s: EqualValues = %v, want %v", tt.name, got, tt.want)
		}
	}
	if validate.EqualValues(reflect.Value{}, reflect.ValueOf(v)) {
		t.Error("an invalid value equals a value")
	}
}

type withSlice struct {
	URL    string
	Events []string
}

// A slice field (NewWebhookEndpoint's events) is copied and compared element by element;
// a nil slice (left out) is not an empty one.
func TestCopyValueEqualValuesSlices(t *testing.T) {
	v := withSlice{URL: "https://hooks.example.com/x", Events: []string{"user.created", "card.added"}}
	c := validate.CopyValue(reflect.ValueOf(v))
	if !validate.EqualValues(reflect.ValueOf(v), c) {
		t.Fatal("a copy is not equal to its original")
	}
	v.Events[0] = "card.deleted" // through the original's backing array
	if validate.EqualValues(reflect.ValueOf(v), c) {
		t.Fatal("the copy changed with its original: it shares the slice's elements")
	}
	tests := []struct {
		name string
		a, b withSlice
		want bool
	}{
		{"BothNil", withSlice{}, withSlice{}, true},
		{"NilAndEmpty", withSlice{}, withSlice{Events: []string{}}, false},
		{"Shorter", withSlice{Events: []string{"a"}}, withSlice{Events: []string{"a", "b"}}, false},
		{"OtherOrder", withSlice{Events: []string{"a", "b"}}, withSlice{Events: []string{"b", "a"}}, false},
		{"Same", withSlice{Events: []string{"a", "b"}}, withSlice{Events: []string{"a", "b"}}, true},
	}
	for _, tt := range tests {
		if got := validate.EqualValues(reflect.ValueOf(tt.a), reflect.ValueOf(tt.b)); got != tt.want {
			t.Errorf("%s: EqualValues = %v, want %v", tt.name, got, tt.want)
		}
	}
}
