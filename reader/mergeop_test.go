package reader_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesoul-go/lakesoul/reader"
)

func withOps(f *fixture, props map[string]string) *fixture {
	f.table.Properties = props
	return f
}

var (
	nF = arrow.Field{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true}
	sF = arrow.Field{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}
)

// Scenario 24: UseLastNotNull keeps the previous value when a NULL is upserted.
func TestMergeUseLastNotNull(t *testing.T) {
	f := withOps(newFixture(t, []arrow.Field{idF, addrF}, nil, []string{"id"}, 1),
		map[string]string{"merge_op.address": "UseLastNotNull"})
	f.write([]string{"id", "address"}, []any{1, "a1"}, []any{2, "b1"})
	f.write([]string{"id", "address"}, []any{1, nil}, []any{2, "b2"})
	f.expect("id=1 address=a1", "id=2 address=b2")
}

// Scenario 26: SumAll over upserts 10, 5, 7 reads 22; a NULL among them reads NULL.
func TestMergeSumAll(t *testing.T) {
	f := withOps(newFixture(t, []arrow.Field{idF, nF}, nil, []string{"id"}, 1), map[string]string{"merge_op.n": "sum"})
	f.write([]string{"id", "n"}, []any{1, 10}, []any{2, 1})
	f.write([]string{"id", "n"}, []any{1, 5}, []any{2, nil})
	f.write([]string{"id", "n"}, []any{1, 7}, []any{1, 0})
	f.expect("id=1 n=22", "id=2 n=NULL")
}

// SumLast adds each file's last value only; SumAll adds every row.
func TestMergeSumLastVsSumAll(t *testing.T) {
	for op, want := range map[string]string{"SumLast": "id=1 n=12", "SumAll": "id=1 n=14"} {
		f := withOps(newFixture(t, []arrow.Field{idF, nF}, nil, []string{"id"}, 1), map[string]string{"merge_op.n": op})
		f.write([]string{"id", "n"}, []any{1, 2}, []any{1, 5}) // one file: last value 5
		f.write([]string{"id", "n"}, []any{1, 7})
		f.expect(want)
	}
}

func TestMergeJoinedAndMinMax(t *testing.T) {
	f := withOps(newFixture(t, []arrow.Field{idF, sF, nF}, nil, []string{"id"}, 1),
		map[string]string{"merge_op.s": "JoinedLastBySemicolon", "merge_op.n": "max"})
	f.write([]string{"id", "s", "n"}, []any{1, "a", 3}, []any{1, "b", 9})
	f.write([]string{"id", "s", "n"}, []any{1, "c", nil})
	f.write([]string{"id", "n"}, []any{1, 4})
	f.expect("id=1 s=b;c n=9")

	g := withOps(newFixture(t, []arrow.Field{idF, sF, nF}, nil, []string{"id"}, 1),
		map[string]string{"merge_op.s": "JoinedAllByComma", "merge_op.n": "MIN"})
	g.write([]string{"id", "s", "n"}, []any{1, "a", 3}, []any{1, "b", 9})
	g.write([]string{"id", "s", "n"}, []any{1, "c", 2})
	g.expect("id=1 s=a,b,c n=2")
}

func TestMergeOpValidation(t *testing.T) {
	if _, err := reader.ParseMergeOp("Concat"); err == nil {
		t.Fatal("unknown operator accepted")
	}
	if err := reader.CheckMergeOp(reader.SumAll, arrow.BinaryTypes.String); err == nil {
		t.Fatal("sum over text accepted")
	}
}

// Scenarios 29 (snapshot part) and 30: a key whose newest op is delete
// disappears; a later insert resurrects it; change feeds keep the delete.
func TestCDCMerge(t *testing.T) {
	op := arrow.Field{Name: "op", Type: arrow.BinaryTypes.String, Nullable: true}
	f := withOps(newFixture(t, []arrow.Field{idF, nameF, op}, nil, []string{"id"}, 2),
		map[string]string{reader.CDCColumnProperty: "op"})
	f.write([]string{"id", "name", "op"}, []any{1, "a", "insert"}, []any{2, "x", "insert"})
	f.write([]string{"id", "name", "op"}, []any{1, "b", "update"})
	f.write([]string{"id", "op"}, []any{1, "delete"})
	f.expect("id=2 name=x op=insert")
	f.write([]string{"id", "name", "op"}, []any{1, "c", "insert"})
	f.expect("id=1 name=c op=insert", "id=2 name=x op=insert")
}
