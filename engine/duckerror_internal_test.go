package engine

import (
	"strings"
	"testing"

	"github.com/duckdb/duckdb-go/v2"
)

// TestDuckDBErrorsHideScanHandles: a DuckDB message quoting the engine's
// lakesoul_scan('<handle>') FROM item reaches the client without the
// session's handle.
func TestDuckDBErrorsHideScanHandles(t *testing.T) {
	for _, msg := range []string{
		`Binder Error: No function matches the given name and argument types 'lower(INTEGER)' in lakesoul_scan('s3cr3t:42')`,
		`Binder Error: Values list "lakesoul_scan('s3cr3t:42:p7')" does not have a column named "x"`,
		`Catalog Error: Table Function lakesoul_scan('it''s:s3cr3t') failed`,
	} {
		e := mapDuckDBError(&duckdb.Error{Type: duckdb.ErrorTypeBinder, Msg: msg})
		if e == nil {
			t.Fatalf("%q: not mapped", msg)
		}
		if strings.Contains(e.Message, "s3cr3t") || strings.Contains(e.Message, "lakesoul_scan(") {
			t.Errorf("%q → %q: the scan handle is shown", msg, e.Message)
		}
	}
}

// TestDuckDBErrorsInPostgreSQLWords enumerates DuckDB's error classes: an
// error of any class whose message no rule knows reaches the client with a
// SQLSTATE and PostgreSQL's generic message for it, never DuckDB's text;
// and messages DuckDB gives for common mistakes become PostgreSQL's.
func TestDuckDBErrorsInPostgreSQLWords(t *testing.T) {
	generic := map[string]bool{}
	for _, m := range genericMessages {
		generic[m] = true
	}
	for typ := duckdb.ErrorTypeInvalid; typ <= duckdb.ErrorTypeInvalidConfiguration; typ++ {
		msg := "Some Error: an unforeseen DuckDB message!\nLINE 1: SELECT ..."
		e := mapDuckDBError(&duckdb.Error{Type: typ, Msg: msg})
		if e == nil || len(e.Code) != 5 {
			t.Fatalf("class %d: %+v", typ, e)
		}
		if !generic[e.Message] {
			t.Errorf("class %d: message %q is not PostgreSQL's generic message for %s", typ, e.Message, e.Code)
		}
		if strings.Contains(e.Message, "unforeseen") || strings.Contains(e.Detail, "unforeseen") || strings.Contains(e.Hint, "unforeseen") {
			t.Errorf("class %d: DuckDB's text reaches the client: %+v", typ, e)
		}
	}
	for _, c := range []struct {
		typ        duckdb.ErrorType
		msg        string
		code, want string
	}{
		{duckdb.ErrorTypeConversion, "Conversion Error: Could not convert string 'x' to INT64\nLINE 1: ...", "22P02", `invalid input syntax for type bigint: "x"`},
		{duckdb.ErrorTypeConversion, "Conversion Error: Could not convert string '99999999999' to INT32 when casting from source column v", "22003", `value "99999999999" is out of range for type integer`},
		{duckdb.ErrorTypeConversion, `Conversion Error: invalid date field format: "nope", expected format is (YYYY-MM-DD)`, "22007", `invalid input syntax for type date: "nope"`},
		{duckdb.ErrorTypeBinder, `Binder Error: Referenced column "nope" not found in FROM clause!`, "42703", `column "nope" does not exist`},
		{duckdb.ErrorTypeCatalog, "Catalog Error: Scalar Function with name nope does not exist!\nDid you mean \"nop\"?", "42883", "function nope does not exist"},
		{duckdb.ErrorTypeBinder, "Binder Error: No function matches the given name and argument types 'lower(INTEGER)'. You might need to add explicit type casts.", "42883", "function lower(integer) does not exist"},
		{duckdb.ErrorTypeBinder, `Binder Error: Could not choose a best candidate function for the function call "+(INTEGER, STRING_LITERAL)". In order to select one, please add explicit type casts.`, "42725", "operator is not unique: integer + unknown"},
		{duckdb.ErrorTypeBinder, "Binder Error: Cannot compare values of type INTEGER and type DATE - an explicit cast is required", "42883", "operator does not exist: integer = date"},
		{duckdb.ErrorTypeOutOfRange, "Out of Range Error: Overflow in multiplication of INT32 (2147483647 * 2)!", "22003", "integer out of range"},
		{duckdb.ErrorTypeConversion, "Conversion Error: Type INT64 with value 99999 can't be cast because the value is out of range for the destination type INT16", "22003", "smallint out of range"},
		{duckdb.ErrorTypeBinder, `Binder Error: column "v" must appear in the GROUP BY clause or must be part of an aggregate function.`, "42803", `column "v" must appear in the GROUP BY clause or be used in an aggregate function`},
		{duckdb.ErrorTypeParser, `Parser Error: syntax error at or near "FORM"`, "42601", `syntax error at or near "FORM"`},
	} {
		e := mapDuckDBError(&duckdb.Error{Type: c.typ, Msg: c.msg})
		if e.Code != c.code || e.Message != c.want {
			t.Errorf("%q → %s %q, want %s %q", c.msg, e.Code, e.Message, c.code, c.want)
		}
	}
}
