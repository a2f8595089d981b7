package engine

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// charRule is PostgreSQL's assignment of text to a varchar(n) or char(n)
// column, for writes whose values do not pass through DuckDB (COPY, Arrow
// ingest); SQL writes apply the same rule as lakesoul_char_assign
// (lakeWriteCast). A value longer than n characters fails with 22001 unless
// the characters beyond n are spaces, which are cut; a char value loses its
// trailing spaces (char(n) does not tell them apart: they are padding).
type charRule struct {
	max  int    // n; -1 without a length (bpchar)
	pad  bool   // char(n) / bpchar
	name string // the type's name in the 22001 message
}

// charRuleOf is the rule of column f, false when f is no varchar(n),
// char(n) or bpchar column.
func charRuleOf(f arrow.Field) (charRule, bool) {
	if _, text := f.Type.(*arrow.StringType); !text {
		return charRule{}, false
	}
	pt, _ := f.Metadata.GetValue(schema.MetaPGType)
	r := charRule{max: -1, pad: strings.HasPrefix(pt, "bpchar"), name: pgTypeName(f)}
	if i := strings.IndexByte(pt, '('); i > 0 {
		if n, err := strconv.Atoi(strings.TrimSuffix(pt[i+1:], ")")); err == nil {
			r.max = n
		}
	}
	return r, r.pad || r.max >= 0 && strings.HasPrefix(pt, "varchar")
}

// assign is v as the column stores it (a sub-slice of v), or 22001.
func (r charRule) assign(v []byte) ([]byte, error) {
	if r.pad {
		v = bytes.TrimRight(v, " ")
	}
	if r.max >= 0 && len(v) > r.max {
		if n := utf8.RuneCount(v); n > r.max {
			// Beyond the length only spaces, which are cut.
			if trimmed := bytes.TrimRight(v, " "); utf8.RuneCount(trimmed) <= r.max {
				return v[:runePrefix(v, r.max)], nil
			}
			return nil, sqlerr.New(sqlerr.StringDataRightTruncation, "value too long for type %s(%d)", r.name, r.max)
		}
	}
	return v, nil
}

// charAssignRecord returns rec (retained) with the rule of each varchar(n)
// and char(n) column of sch (rec's schema, the table's fields) applied to
// its values; the caller releases the result.
func charAssignRecord(rec arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	cols := rec.Columns()
	var out []arrow.Array
	for i, f := range rec.Schema().Fields() {
		r, ok := charRuleOf(f)
		if !ok {
			continue
		}
		col := cols[i].(*array.String)
		b := array.NewStringBuilder(mem)
		changed := false
		for j := range col.Len() {
			if col.IsNull(j) {
				b.AppendNull()
				continue
			}
			v := col.Value(j)
			a, err := r.assign([]byte(v))
			if err != nil {
				b.Release()
				for _, o := range out {
					o.Release()
				}
				return nil, err
			}
			changed = changed || len(a) != len(v)
			b.BinaryBuilder.Append(a)
		}
		if !changed {
			b.Release()
			continue
		}
		if out == nil {
			out = make([]arrow.Array, len(cols))
		}
		out[i] = b.NewArray()
		b.Release()
	}
	if out == nil {
		rec.Retain()
		return rec, nil
	}
	for i, c := range cols {
		if out[i] == nil {
			c.Retain()
			out[i] = c
		}
	}
	res := array.NewRecordBatch(rec.Schema(), out, rec.NumRows())
	for _, o := range out {
		o.Release()
	}
	return res, nil
}
