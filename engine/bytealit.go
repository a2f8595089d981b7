package engine

import (
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Bytea text. PostgreSQL reads bytea text as hex ('\x00ff') or escape format
// ('a\\b\001'); DuckDB reads BLOB text byte by byte with \xHH escapes, so
// the same text means other bytes there ('\x00ff' is two bytes in
// PostgreSQL, three in DuckDB). Literals cast to bytea and text values bound
// to bytea parameters are therefore decoded the PostgreSQL way before DuckDB
// sees them: literals re-spelled in DuckDB's escapes, parameters as bytes.

// rewriteByteaLiterals re-spells every string literal cast to bytea in stmt
// for DuckDB. Malformed bytea text fails with 22P02, as in PostgreSQL.
func rewriteByteaLiterals(stmt *pg_query.Node) error {
	var err error
	walk(stmt, func(n *pg_query.Node) {
		tc := n.GetTypeCast()
		if err != nil || tc == nil || tc.TypeName == nil || typeNameString(tc.TypeName) != "bytea" ||
			len(tc.TypeName.ArrayBounds) > 0 {
			return
		}
		sv := tc.Arg.GetAConst().GetSval()
		if sv == nil {
			return
		}
		b, perr := parseByteaText([]byte(sv.Sval))
		if perr != nil {
			err = sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type bytea: %q", sv.Sval)
			return
		}
		sv.Sval = duckBlobText(b)
	})
	return err
}

// duckBlobText spells b as DuckDB BLOB text: printable ASCII as is, every
// other byte (and the backslash) as \xHH.
func duckBlobText(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		if c >= 0x20 && c < 0x7f && c != '\\' {
			sb.WriteByte(c)
			continue
		}
		fmt.Fprintf(&sb, `\x%02X`, c)
	}
	return sb.String()
}
