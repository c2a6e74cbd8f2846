package seal

// Internals the external tests use.

// The errors of Open besides ErrMissingKey.
var (
	ErrNotSealed  = errNotSealed
	ErrUnsealable = errUnsealable
)
