package reader

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesoul-go/lakesoul/catalog"
)

// MergeOp is how merge-on-read combines the values one primary key has in
// several rows (LakeSoul §4.3). Rows are taken in order: older files first,
// and within a file in arrival order.
type MergeOp int

const (
	// UseLast takes the newest row's value, NULL included (the default).
	UseLast MergeOp = iota
	// UseLastNotNull takes the newest non-NULL value.
	UseLastNotNull
	// SumAll sums every row's value; a NULL anywhere gives NULL.
	SumAll
	// SumLast sums each file's last value; a NULL anywhere gives NULL.
	SumLast
	// JoinedLastByComma joins each file's last value with ",".
	JoinedLastByComma
	// JoinedLastBySemicolon joins each file's last value with ";".
	JoinedLastBySemicolon
	// JoinedAllByComma joins every value with ",". (LakeSoul's native reader
	// omits the delimiter; we follow the JVM operator and emit it.)
	JoinedAllByComma
	// JoinedAllBySemicolon joins every value with ";".
	JoinedAllBySemicolon
	// Max takes the largest non-NULL value.
	Max
	// Min takes the smallest non-NULL value.
	Min
)

var mergeOpNames = map[string]MergeOp{
	"uselast": UseLast, "last": UseLast,
	"uselastnotnull": UseLastNotNull, "last_not_null": UseLastNotNull,
	"sumall": SumAll, "sum": SumAll,
	"sumlast": SumLast, "sum_last": SumLast,
	"joinedlastbycomma": JoinedLastByComma, "joinedlastbysemicolon": JoinedLastBySemicolon,
	"joinedallbycomma": JoinedAllByComma, "joinedallbysemicolon": JoinedAllBySemicolon,
	"max": Max, "min": Min,
}

// MergeOpPrefix prefixes the table property naming a column's merge operator:
// WITH (merge_op.v = 'SumAll') stores property "merge_op.v".
const MergeOpPrefix = "merge_op."

// CDCColumnProperty is the table property naming a CDC table's op column.
const CDCColumnProperty = catalog.CDCColumnProperty

// ParseMergeOp resolves an operator name (case-insensitive, LakeSoul's names
// or the short forms sum, last, last_not_null, sum_last, max, min).
func ParseMergeOp(name string) (MergeOp, error) {
	if op, ok := mergeOpNames[strings.ToLower(name)]; ok {
		return op, nil
	}
	return 0, fmt.Errorf("unknown merge operator %q (known: UseLast, UseLastNotNull, SumAll, SumLast, JoinedLastByComma, JoinedLastBySemicolon, JoinedAllByComma, JoinedAllBySemicolon, max, min)", name)
}

// CheckMergeOp reports whether op can combine values of type dt.
func CheckMergeOp(op MergeOp, dt arrow.DataType) error {
	switch op {
	case UseLast, UseLastNotNull:
		return nil
	case SumAll, SumLast:
		switch dt.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128:
			return nil
		}
		return fmt.Errorf("sum operators need a numeric column, not %s", dt)
	case JoinedLastByComma, JoinedLastBySemicolon, JoinedAllByComma, JoinedAllBySemicolon:
		if dt.ID() == arrow.STRING {
			return nil
		}
		return fmt.Errorf("joined operators need a text column, not %s", dt)
	case Max, Min:
		switch dt.ID() {
		case arrow.BINARY:
			return fmt.Errorf("max/min do not apply to bytea")
		}
		return nil
	}
	return fmt.Errorf("unknown merge operator %d", op)
}

// TableMergeOps returns the merge operator of every table column (UseLast
// unless a merge_op.<col> property says otherwise).
func TableMergeOps(t *catalog.Table) ([]MergeOp, error) {
	ops := make([]MergeOp, t.Schema.NumFields())
	for k, v := range t.Properties {
		col, ok := strings.CutPrefix(k, MergeOpPrefix)
		if !ok {
			continue
		}
		idx := t.Schema.FieldIndices(col)
		if len(idx) == 0 {
			return nil, fmt.Errorf("merge operator for unknown column %q", col)
		}
		op, err := ParseMergeOp(v)
		if err != nil {
			return nil, err
		}
		if err := CheckMergeOp(op, t.Schema.Field(idx[0]).Type); err != nil {
			return nil, fmt.Errorf("column %q: %w", col, err)
		}
		ops[idx[0]] = op
	}
	return ops, nil
}
