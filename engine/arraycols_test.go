package engine_test

import (
	"encoding/binary"
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// int8ArrayBinary is PostgreSQL's binary form of a one-dimensional int8[]
// (nil element = NULL).
func int8ArrayBinary(elems ...*int64) []byte {
	be := binary.BigEndian
	b := be.AppendUint32(nil, 1) // ndim
	b = be.AppendUint32(b, 1)    // has nulls
	b = be.AppendUint32(b, 20)   // int8
	b = be.AppendUint32(b, uint32(len(elems)))
	b = be.AppendUint32(b, 1) // lower bound
	for _, e := range elems {
		if e == nil {
			b = be.AppendUint32(b, 0xffffffff)
			continue
		}
		b = be.AppendUint32(b, 8)
		b = be.AppendUint64(b, uint64(*e))
	}
	return b
}

// TestArrayColumns stores array columns in a keyed table (merge-on-read
// scans) and a table without a key (DuckDB's own Parquet scan): literals,
// COPY in text and binary form, an upsert that replaces an array, and bad
// array text refused with 22P02 without writing anything.
func TestArrayColumns(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE SCHEMA ac;
		CREATE TABLE ac.k (id bigint PRIMARY KEY, ia bigint[], ta text[], fa float8[], ba bool[]);
		CREATE TABLE ac.n (id bigint, ia bigint[], ta text[])`)
	for _, tbl := range []string{"ac.k", "ac.n"} {
		mustRun(t, s, "INSERT INTO "+tbl+` (id, ia, ta) VALUES (1, '{1,NULL,3}', '{"a b",c}'), (2, ARRAY[4], ARRAY['x'])`)
		if tag, err := copyIn(t, s, "COPY "+tbl+" (id, ia, ta) FROM STDIN", [][][]byte{
			row("3", `{5, 6}`, `{"q\"x",NULL,"NULL"}`), row("4", "{}", `\N`)}); err != nil || tag != "COPY 2" {
			t.Fatalf("%s: COPY text: %q, %v", tbl, tag, err)
		}
		seven := int64(7)
		if tag, err := copyIn(t, s, "COPY "+tbl+" (id, ia) FROM STDIN (FORMAT binary)", [][][]byte{
			{be8(5), int8ArrayBinary(&seven, nil)}}); err != nil || tag != "COPY 1" {
			t.Fatalf("%s: COPY binary: %q, %v", tbl, tag, err)
		}
		expectRows(t, s, "SELECT id, ia[1], ia[2], cardinality(ia), ta[1], ta[2], ta[3] FROM "+tbl+" ORDER BY id",
			"1|1|NULL|3|a b|c|NULL", "2|4|NULL|1|x|NULL|NULL", `3|5|6|2|q"x|NULL|NULL`, "4|NULL|NULL|0|NULL|NULL|NULL",
			"5|7|NULL|2|NULL|NULL|NULL")
		expectRows(t, s, "SELECT id FROM "+tbl+" WHERE 6 = ANY(ia) OR ta @> '{x}' ORDER BY id", "2", "3")
		expectRows(t, s, "SELECT sum(u) FROM "+tbl+", unnest(ia) u", "26")
		for _, bad := range []string{`{1,2`, `{1,x}`, `1,2`, `{1,"2}`} {
			if _, err := run(t, s, "INSERT INTO "+tbl+" (id, ia) VALUES (9, '"+bad+"')"); sqlerr.Code(err) != "22P02" {
				t.Errorf("%s: INSERT %q: %v, want 22P02", tbl, bad, err)
			}
			if _, err := copyIn(t, s, "COPY "+tbl+" (id, ia) FROM STDIN", [][][]byte{row("8", "{8}"), row("9", bad)}); sqlerr.Code(err) != "22P02" {
				t.Errorf("%s: COPY %q: %v, want 22P02", tbl, bad, err)
			}
			// Compared with an array column, the literal is read as an
			// array too (PostgreSQL: malformed array literal).
			if _, err := run(t, s, "SELECT id FROM "+tbl+" WHERE ia = '"+bad+"'"); sqlerr.Code(err) != "22P02" {
				t.Errorf("%s: WHERE ia = %q: %v, want 22P02", tbl, bad, err)
			}
		}
		expectRows(t, s, "SELECT id FROM "+tbl+" WHERE ia = '{5, 6}'", "3")
		expectRows(t, s, "SELECT id FROM "+tbl+" WHERE ta = '{ \"a b\" , c }'", "1")
		expectRows(t, s, "SELECT count(*) FROM "+tbl, "5")
	}
	// An upsert replaces the whole array (columns it does not write keep
	// their values, as LakeSoul upserts do); the merge keeps the last one.
	mustRun(t, s, `INSERT INTO ac.k (id, ia, fa, ba) VALUES (1, '{10,20}', '{1.5,-2}', '{t,NULL}')`)
	mustRun(t, s, `UPDATE ac.k SET ta = ARRAY['new', NULL] WHERE id = 2`)
	expectRows(t, s, "SELECT id, ia[2], cardinality(ia), fa[2], ba[1], ba[2], ta[1] FROM ac.k WHERE id <= 2 ORDER BY id",
		"1|20|2|-2|true|NULL|a b", "2|NULL|1|NULL|NULL|NULL|new")
	if _, err := run(t, s, "CREATE TABLE ac.bad (id bigint, u uuid[])"); sqlerr.Code(err) != "0A000" {
		t.Errorf("uuid[] column: %v, want 0A000", err)
	}
}

func be8(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }
