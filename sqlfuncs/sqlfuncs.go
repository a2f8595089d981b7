// Package sqlfuncs holds the catalog's SQL functions: the commit protocol,
// snapshot resolution and DDL, as PL/pgSQL in schema "lakesoul".
//
// The files are idempotent (CREATE OR REPLACE) and applied in name order after
// the migrations, on every start, so a fixed function ships with the binary
// without a migration. They never create or alter tables: that is migrations/.
// The last, 990_privileges.sql, decides who may call every function: none
// but the catalog owner unless it names the function there.
package sqlfuncs

import (
	"embed"
	"io/fs"
	"sort"
)

//go:embed *.sql
var files embed.FS

// Script is one SQL file of function definitions.
type Script struct {
	Name string
	SQL  string
}

// Scripts returns the function scripts in the order they must be applied.
func Scripts() ([]Script, error) {
	names, err := fs.Glob(files, "*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]Script, 0, len(names))
	for _, n := range names {
		b, err := files.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, Script{Name: n, SQL: string(b)})
	}
	return out, nil
}
