package pgqueries

// sqlc writes the rest of this package from pgqueries/*.sql and ../migrations/ (the second
// block of sqlc.yaml); adapter.go is derived from what it wrote.
//go:generate go run ../../../genadapter/cmd/genadapter
