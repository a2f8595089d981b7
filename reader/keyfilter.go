package reader

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
)

// KeyFilter restricts a scan of a primary-key table to the rows whose key
// satisfies every one of its conditions. The scan then skips files, row
// groups and pages that cannot hold such a key (statistics, the page index,
// bloom filters) and returns only matching rows. Every version of a
// matching key is still merged: a file, row group or page holding one of
// them can match the filter, so it is read. Pruning is therefore invisible
// in the result: a filtered scan returns exactly the rows of the full merge
// whose key matches.
type KeyFilter struct {
	Conds []Cond
}

// Cond constrains one column. With In set the column equals one of Values
// (an empty list matches nothing); otherwise it lies between Lower and
// Upper (nil: unbounded), a bound included when its Inclusive flag is set.
// It never equals one of Exclude. Values and bounds are int64 for integer,
// date (days) and timestamp (the column's unit) columns and string for
// text columns. A NULL satisfies no condition.
type Cond struct {
	Column                         string
	In                             bool
	Values                         []any
	Lower, Upper                   any
	LowerInclusive, UpperInclusive bool
	Exclude                        []any
}

// RowFilter restricts a scan to the merged rows whose columns — any
// columns, primary key or not — satisfy every one of its conditions. It is
// applied after the merge, so it never changes which version of a key
// wins: a key whose newest version does not match is left out even when an
// older one did.
type RowFilter struct {
	Conds []Cond
}

// String renders the filter for EXPLAIN, as KeyFilter.String does.
func (f *RowFilter) String() string { return condsString(f.Conds) }

// String renders the filter for EXPLAIN: "id = 5", "k IN ('a', 'b')",
// "id >= 3 AND id < 9".
func (f *KeyFilter) String() string { return condsString(f.Conds) }

func condsString(conds []Cond) string {
	return FormatConds(conds, func(_ string, v any) string { return keyLiteral(v) })
}

// FormatConds renders conditions as String does, each value by literal
// (given its column), for renderings that know the columns' types.
func FormatConds(conds []Cond, literal func(col string, v any) string) string {
	var parts []string
	for _, c := range conds {
		name := quoteName(c.Column)
		switch {
		case c.In && len(c.Values) == 1:
			parts = append(parts, name+" = "+literal(c.Column, c.Values[0]))
		case c.In:
			vals := make([]string, len(c.Values))
			for i, v := range c.Values {
				vals[i] = literal(c.Column, v)
			}
			parts = append(parts, name+" IN ("+strings.Join(vals, ", ")+")")
		default:
			if c.Lower != nil {
				op := " > "
				if c.LowerInclusive {
					op = " >= "
				}
				parts = append(parts, name+op+literal(c.Column, c.Lower))
			}
			if c.Upper != nil {
				op := " < "
				if c.UpperInclusive {
					op = " <= "
				}
				parts = append(parts, name+op+literal(c.Column, c.Upper))
			}
		}
		for _, v := range c.Exclude {
			parts = append(parts, name+" <> "+literal(c.Column, v))
		}
	}
	return strings.Join(parts, " AND ")
}

func quoteName(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		}
	}
	return s
}

func keyLiteral(v any) string {
	if s, ok := v.(string); ok {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return fmt.Sprint(v)
}

// keyKind is how a key column's values compare: as int64 or as strings
// (bytewise, as Parquet orders byte arrays and DuckDB compares VARCHAR).
type keyKind uint8

const (
	kindInt keyKind = iota + 1
	kindStr
)

// kindDecimal is the first of the kinds of DECIMAL columns of up to 18
// digits: their values compare as the int64 unscaled values at one scale,
// and kindDecimal+s is the kind of scale s. Statistics of a file whose
// column has another scale (written before a widening ALTER) are of
// another kind, so they prove nothing about the table's values.
const kindDecimal keyKind = 16

// maxDecimalDigits is the largest DECIMAL precision whose unscaled values
// fit an int64.
const maxDecimalDigits = 18

// decimalKind is the kind of a DECIMAL of the given scale.
func decimalKind(scale int32) keyKind { return kindDecimal + keyKind(scale) }

// keyKindOf is the kind of a key column type; 0 when keys of the type are
// not filtered.
func keyKindOf(dt arrow.DataType) keyKind {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.DATE32, arrow.TIMESTAMP:
		return kindInt
	case arrow.STRING:
		return kindStr
	}
	return 0
}

// condKindOf is the kind of a column type that conditions (Cond) compare:
// keyKindOf's, and DECIMALs of up to 18 digits, whose condition values are
// int64 unscaled values at the column's scale. Only row filters take
// DECIMAL columns: key columns of a file are compared in the file's type.
func condKindOf(dt arrow.DataType) keyKind {
	if d, ok := dt.(*arrow.Decimal128Type); ok {
		if d.Precision <= maxDecimalDigits && d.Scale >= 0 && d.Scale <= d.Precision {
			return decimalKind(d.Scale)
		}
		return 0
	}
	return keyKindOf(dt)
}

// keyValue is one value of a key column of either kind.
type keyValue struct {
	i int64
	s string
}

func (k keyKind) compare(a, b keyValue) int {
	if k == kindStr {
		return strings.Compare(a.s, b.s)
	}
	switch {
	case a.i < b.i:
		return -1
	case a.i > b.i:
		return 1
	}
	return 0
}

// keyBound is one end of an interval.
type keyBound struct {
	set, incl bool
	v         keyValue
}

// keyPred is a compiled Cond.
type keyPred struct {
	col   int // table column
	name  string
	kind  keyKind
	bloom arrowutil.BloomKind
	// points are the allowed values, sorted and distinct, when the
	// condition lists them; otherwise lo and hi bound an interval.
	points   []keyValue
	isPoints bool
	lo, hi   keyBound
	// excl are values the column must not equal (sorted, distinct).
	excl []keyValue
}

// keyMatcher is a compiled KeyFilter: every predicate must hold.
type keyMatcher struct {
	preds []keyPred
}

// compileKeyFilter checks f against t's primary key and compiles it; nil
// for a nil filter.
func compileKeyFilter(t *catalog.Table, f *KeyFilter) (*keyMatcher, error) {
	if f == nil {
		return nil, nil
	}
	for _, c := range f.Conds {
		if !slices.Contains(t.PKCols, c.Column) {
			return nil, fmt.Errorf("key filter: %q is not a primary-key column of %s", c.Column, t.QualifiedName())
		}
		if len(c.Exclude) > 0 {
			return nil, fmt.Errorf("key filter: exclusions on %q prune nothing", c.Column)
		}
		if idx := t.Schema.FieldIndices(c.Column); len(idx) > 0 && keyKindOf(t.Schema.Field(idx[0]).Type) == 0 {
			return nil, fmt.Errorf("key filter: key column %q of type %s cannot be filtered", c.Column, t.Schema.Field(idx[0]).Type)
		}
	}
	return compileConds(t, f.Conds, "key filter")
}

// compileRowFilter compiles f against t; nil for a nil filter.
func compileRowFilter(t *catalog.Table, f *RowFilter) (*keyMatcher, error) {
	if f == nil {
		return nil, nil
	}
	return compileConds(t, f.Conds, "row filter")
}

// compileConds compiles conditions on columns of t.
func compileConds(t *catalog.Table, conds []Cond, what string) (*keyMatcher, error) {
	m := &keyMatcher{}
	for _, c := range conds {
		idx := t.Schema.FieldIndices(c.Column)
		if len(idx) == 0 {
			return nil, fmt.Errorf("%s: %q is not a column of %s", what, c.Column, t.QualifiedName())
		}
		dt := t.Schema.Field(idx[0]).Type
		p := keyPred{col: idx[0], name: c.Column, kind: condKindOf(dt), bloom: arrowutil.BloomKindOf(dt), isPoints: c.In}
		if p.kind == 0 {
			return nil, fmt.Errorf("%s: column %q of type %s cannot be filtered", what, c.Column, dt)
		}
		conv := func(v any) (keyValue, error) {
			switch x := v.(type) {
			case int64:
				if p.kind != kindStr {
					return keyValue{i: x}, nil
				}
			case string:
				if p.kind == kindStr {
					return keyValue{s: x}, nil
				}
			}
			return keyValue{}, fmt.Errorf("%s: value %v (%T) for column %q of type %s", what, v, v, c.Column, dt)
		}
		for _, v := range c.Exclude {
			kv, err := conv(v)
			if err != nil {
				return nil, err
			}
			p.excl = append(p.excl, kv)
		}
		slices.SortFunc(p.excl, p.kind.compare)
		p.excl = slices.CompactFunc(p.excl, func(a, b keyValue) bool { return p.kind.compare(a, b) == 0 })
		if c.In {
			for _, v := range c.Values {
				kv, err := conv(v)
				if err != nil {
					return nil, err
				}
				p.points = append(p.points, kv)
			}
			slices.SortFunc(p.points, p.kind.compare)
			p.points = slices.CompactFunc(p.points, func(a, b keyValue) bool { return p.kind.compare(a, b) == 0 })
		} else {
			for _, b := range []struct {
				v    any
				incl bool
				dst  *keyBound
			}{{c.Lower, c.LowerInclusive, &p.lo}, {c.Upper, c.UpperInclusive, &p.hi}} {
				if b.v == nil {
					continue
				}
				kv, err := conv(b.v)
				if err != nil {
					return nil, err
				}
				*b.dst = keyBound{set: true, incl: b.incl, v: kv}
			}
		}
		m.preds = append(m.preds, p)
	}
	return m, nil
}

// empty reports whether no key can match (an empty IN list, an empty
// interval).
func (m *keyMatcher) empty() bool {
	for i := range m.preds {
		p := &m.preds[i]
		if p.isPoints && len(p.points) == 0 {
			return true
		}
		if !p.isPoints && p.lo.set && p.hi.set {
			c := p.kind.compare(p.lo.v, p.hi.v)
			if c > 0 || (c == 0 && !(p.lo.incl && p.hi.incl)) {
				return true
			}
		}
	}
	return false
}

// match reports whether v satisfies p.
func (p *keyPred) match(v keyValue) bool {
	if len(p.excl) > 0 {
		if _, found := slices.BinarySearchFunc(p.excl, v, p.kind.compare); found {
			return false
		}
	}
	if p.isPoints {
		if len(p.points) == 1 {
			return p.kind.compare(v, p.points[0]) == 0
		}
		_, found := slices.BinarySearchFunc(p.points, v, p.kind.compare)
		return found
	}
	if p.lo.set {
		if c := p.kind.compare(v, p.lo.v); c < 0 || (c == 0 && !p.lo.incl) {
			return false
		}
	}
	if p.hi.set {
		if c := p.kind.compare(v, p.hi.v); c > 0 || (c == 0 && !p.hi.incl) {
			return false
		}
	}
	return true
}

// overlaps reports whether some value in [lo, hi] (both included) may
// satisfy p.
func (p *keyPred) overlaps(lo, hi keyValue) bool {
	if p.isPoints {
		i, _ := slices.BinarySearchFunc(p.points, lo, p.kind.compare)
		return i < len(p.points) && p.kind.compare(p.points[i], hi) <= 0
	}
	if p.lo.set {
		if c := p.kind.compare(hi, p.lo.v); c < 0 || (c == 0 && !p.lo.incl) {
			return false
		}
	}
	if p.hi.set {
		if c := p.kind.compare(lo, p.hi.v); c > 0 || (c == 0 && !p.hi.incl) {
			return false
		}
	}
	return true
}

// bloomHashes are the hashes of p's points in filters of kind (nil when p
// is an interval, or its column or kind has no bloom filters).
func (p *keyPred) bloomHashes(kind arrowutil.BloomKind) []uint64 {
	if !p.isPoints || p.bloom == arrowutil.NoBloom || kind == arrowutil.NoBloom || (kind == arrowutil.BloomBytes) != (p.bloom == arrowutil.BloomBytes) {
		return nil
	}
	out := make([]uint64, 0, len(p.points))
	for _, v := range p.points {
		switch kind {
		case arrowutil.BloomBytes:
			out = append(out, arrowutil.BloomHashBytes([]byte(v.s)))
		case arrowutil.BloomInt32:
			if v.i < -1<<31 || v.i >= 1<<31 {
				continue // no INT32 column holds it
			}
			out = append(out, arrowutil.BloomHashInt(kind, v.i))
		default:
			out = append(out, arrowutil.BloomHashInt(kind, v.i))
		}
	}
	return out
}

// valueAt is row i of a key column (non-null: keys never are).
func valueAt(arr arrow.Array, i int) keyValue {
	switch a := arr.(type) {
	case *array.String:
		return keyValue{s: a.Value(i)}
	case *array.Int64:
		return keyValue{i: a.Value(i)}
	case *array.Int32:
		return keyValue{i: int64(a.Value(i))}
	case *array.Int16:
		return keyValue{i: int64(a.Value(i))}
	case *array.Int8:
		return keyValue{i: int64(a.Value(i))}
	case *array.Date32:
		return keyValue{i: int64(a.Value(i))}
	case *array.Timestamp:
		return keyValue{i: int64(a.Value(i))}
	case *array.Decimal128:
		// Of at most 18 digits (condKindOf): the low word is the value.
		return keyValue{i: int64(a.Value(i).LowBits())}
	}
	panic("reader: key column of type " + arr.DataType().String())
}

// filter keeps the rows of col (ascending, rewritten in place) whose
// value satisfies p; a NULL satisfies nothing. Intervals on integer-like
// columns compare the raw values in one loop per type, short IN lists on
// text compare each value with the list's strings; other conditions go
// value by value.
func (p *keyPred) filter(col arrow.Array, rows []int) []int {
	out := rows[:0]
	nulls := col.NullN() > 0
	if lo, hi, ok := p.intInterval(); ok {
		switch a := col.(type) {
		case *array.Int64:
			return keepBetween(a.Int64Values(), a, nulls, rows, lo, hi)
		case *array.Int32:
			return keepBetween(a.Int32Values(), a, nulls, rows, lo, hi)
		case *array.Int16:
			return keepBetween(a.Int16Values(), a, nulls, rows, lo, hi)
		case *array.Int8:
			return keepBetween(a.Int8Values(), a, nulls, rows, lo, hi)
		case *array.Date32:
			return keepBetween(a.Date32Values(), a, nulls, rows, lo, hi)
		case *array.Timestamp:
			return keepBetween(a.TimestampValues(), a, nulls, rows, lo, hi)
		case *array.Decimal128:
			// Of at most 18 digits (condKindOf): the low word is the value.
			vals := a.Values()
			for _, r := range rows {
				if v := int64(vals[r].LowBits()); v >= lo && v <= hi && (!nulls || a.IsValid(r)) {
					out = append(out, r)
				}
			}
			return out
		}
	}
	if a, ok := col.(*array.String); ok && p.isPoints && len(p.excl) == 0 && len(p.points) <= 8 {
		// A few values (IN lists): compared one by one, no keyValue.
		for _, r := range rows {
			if nulls && !a.IsValid(r) {
				continue
			}
			v := a.Value(r)
			for _, pt := range p.points {
				if v == pt.s {
					out = append(out, r)
					break
				}
			}
		}
		return out
	}
	for _, r := range rows {
		if (!nulls || col.IsValid(r)) && p.match(valueAt(col, r)) {
			out = append(out, r)
		}
	}
	return out
}

// keepBetween keeps the rows (in place) whose value lies in [lo, hi] and
// is not NULL.
func keepBetween[T ~int8 | ~int16 | ~int32 | ~int64](vals []T, a arrow.Array, nulls bool, rows []int, lo, hi int64) []int {
	out := rows[:0]
	for _, r := range rows {
		if v := int64(vals[r]); v >= lo && v <= hi && (!nulls || a.IsValid(r)) {
			out = append(out, r)
		}
	}
	return out
}

// intInterval is p as the closed interval [lo, hi] of int64 values, when
// p is an interval without exclusions on a column whose values are int64
// (every kind but text); ok is false otherwise. An empty interval has lo
// above hi.
func (p *keyPred) intInterval() (lo, hi int64, ok bool) {
	if p.isPoints || len(p.excl) > 0 || p.kind == kindStr {
		return 0, 0, false
	}
	lo, hi = math.MinInt64, math.MaxInt64
	if p.lo.set {
		lo = p.lo.v.i
		if !p.lo.incl {
			if lo == math.MaxInt64 {
				return 1, 0, true
			}
			lo++
		}
	}
	if p.hi.set {
		hi = p.hi.v.i
		if !p.hi.incl {
			if hi == math.MinInt64 {
				return 1, 0, true
			}
			hi--
		}
	}
	return lo, hi, true
}

// keep narrows rows (ascending, rewritten in place) of b, a batch in the
// table schema, to those satisfying every predicate.
func (m *keyMatcher) keep(b arrow.RecordBatch, rows []int) []int {
	for k := range m.preds {
		if len(rows) == 0 {
			break
		}
		p := &m.preds[k]
		rows = p.filter(b.Column(p.col), rows)
	}
	return rows
}

// probeFor is the probe of a point lookup for a stream whose batch columns
// colMap maps (nil: any stream): the predicate on the leading key column
// when it lists values; nil otherwise.
func (s *Scan) probeFor(colMap []int) *rangeProbe {
	if s.keys == nil {
		return nil
	}
	for i := range s.keys.preds {
		p := &s.keys.preds[i]
		if p.name == s.Table.PKCols[0] && p.isPoints {
			if colMap == nil {
				return &rangeProbe{pred: p}
			}
			if colMap[p.col] >= 0 {
				return &rangeProbe{col: colMap[p.col], pred: p}
			}
		}
	}
	return nil
}

// filterIterator passes on the rows of a unit's merge whose key matches the
// scan's key filter and whose columns match its row filter (every row when
// both are nil: then it only counts them).
type filterIterator struct {
	it   Iterator
	scan *Scan
	m    []*keyMatcher
	// rows is the candidate rows of the batch being filtered, reused;
	// the rows that pass are copied out (a few of many, often).
	rows []int
}

func (f *filterIterator) nextSelected(ctx context.Context) (Selected, error) {
	st := f.scan.stats()
	for {
		b, err := NextSelected(ctx, f.it)
		if err != nil {
			return b, err
		}
		n := b.Len()
		st.RowsMerged.Add(int64(n))
		if len(f.m) == 0 {
			st.RowsOut.Add(int64(n))
			return b, nil
		}
		rows := slices.Grow(f.rows[:0], n)[:n]
		for i := range rows {
			rows[i] = b.Row(i)
		}
		for _, m := range f.m {
			rows = m.keep(b.RecordBatch, rows)
		}
		f.rows = rows
		if len(rows) == 0 {
			b.Release()
			continue
		}
		st.RowsOut.Add(int64(len(rows)))
		var sel []int
		if len(rows) < int(b.NumRows()) {
			sel = slices.Clone(rows)
		}
		return Selected{RecordBatch: b.RecordBatch, Sel: sel}, nil
	}
}

func (f *filterIterator) Next(ctx context.Context) (arrow.RecordBatch, error) {
	s, err := f.nextSelected(ctx)
	if err != nil || s.Sel == nil {
		return s.RecordBatch, err
	}
	defer s.Release()
	return takeRows(f.scan, s.RecordBatch, s.Sel)
}

func (f *filterIterator) Close() { f.it.Close() }

// emptyIterator is a unit no row of which can match.
type emptyIterator struct{}

func (emptyIterator) Next(context.Context) (arrow.RecordBatch, error) { return nil, io.EOF }
func (emptyIterator) Close()                                          {}
