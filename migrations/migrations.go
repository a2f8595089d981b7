// Package migrations holds the versioned catalog schema as golang-migrate SQL
// files, embedded so the binary can apply them. The same files apply with
// golang-migrate's own CLI (`migrate -source file://migrations -database pgx5://…`).
//
// Invariant: a released migration is never edited; changes come as new files.
// LakeSoul's tables (000001) keep LakeSoul's exact columns; additions go in
// schema "lakesoul".
package migrations

import "embed"

// FS holds the *.up.sql and *.down.sql files.
//
//go:embed *.sql
var FS embed.FS
