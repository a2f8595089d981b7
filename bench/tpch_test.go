package bench

import (
	"bufio"
	"math/big"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestTPCHAnswerValue: a value renders the same whatever type a system
// computed it in — numeric, double precision, DuckDB's DECIMAL and HUGEINT,
// integers — rounded to 2 decimals from its decimal value, halves away
// from zero.
func TestTPCHAnswerValue(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{pgtype.Numeric{Int: big.NewInt(241666666666666667), Exp: -16, Valid: true}, "24.17"},
		{24.166666666666668, "24.17"},
		{duckdb.Decimal{Width: 18, Scale: 3, Value: big.NewInt(24167)}, "24.17"},
		{int64(5), "5.00"},
		{int32(5), "5.00"},
		{big.NewInt(5), "5.00"},
		{pgtype.Numeric{Int: big.NewInt(5), Exp: 0, Valid: true}, "5.00"},
		{pgtype.Numeric{Int: big.NewInt(5), Exp: 2, Valid: true}, "500.00"},
		{0.125, "0.13"},
		{-0.125, "-0.13"},
		{-0.001, "0.00"},
		{445032240372.9624, "445032240372.96"},
		{pgtype.Numeric{}, "NULL"},
		{nil, "NULL"},
		{"BUILDING", "BUILDING"},
		{time.Date(1995, 3, 15, 0, 0, 0, 0, time.UTC), "1995-03-15"},
	} {
		if got := tpchAnswerValue(c.in); got != c.want {
			t.Errorf("%T %v: %q, want %q", c.in, c.in, got, c.want)
		}
	}
}

// TestSameTPCHAnswer: ordered answers compare row by row, others as sorted
// lines; a difference names the row.
func TestSameTPCHAnswer(t *testing.T) {
	a, b := []string{"x|1.00", "y|2.00"}, []string{"y|2.00", "x|1.00"}
	if ok, _ := sameTPCHAnswer(a, b, false); !ok {
		t.Error("the same rows in another order differ where the order is not total")
	}
	if ok, diff := sameTPCHAnswer(a, b, true); ok || !strings.Contains(diff, `row 1: "x|1.00" vs "y|2.00"`) {
		t.Errorf("rows in another order where the order is total: %v %q", ok, diff)
	}
	if ok, diff := sameTPCHAnswer(a, a[:1], false); ok || !strings.Contains(diff, "2 rows vs 1") {
		t.Errorf("a missing row: %v %q", ok, diff)
	}
}

// TestTPCHFraction: the tables of a fractional scale are consistent — the
// sizes of TPC-H at that scale, every foreign key in range (a third of the
// customers without orders), each lineitem's part and supplier a partsupp
// row, extended prices from the part's retail price and order totals from
// their lines.
func TestTPCHFraction(t *testing.T) {
	s, err := parseTPCHScale(0.01)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rows, err := generateTPCH(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	for table, n := range map[string]int64{"nation": 25, "region": 5, "supplier": 100, "customer": 1500, "part": 2000,
		"partsupp": 8000, "orders": 15000} {
		if rows[table] != n {
			t.Errorf("%s: %d rows, want %d", table, rows[table], n)
		}
	}
	read := func(table string, f func(fields []string)) {
		file, err := os.Open(tpchTableFile(dir, table))
		if err != nil {
			t.Fatal(err)
		}
		defer file.Close()
		sc := bufio.NewScanner(file)
		var n int64
		for sc.Scan() {
			fields := strings.Split(sc.Text(), "\t")
			if want := len(tpchTables[tableIndex(table)].columns); len(fields) != want {
				t.Fatalf("%s: %d fields, want %d: %q", table, len(fields), want, sc.Text())
			}
			f(fields)
			n++
		}
		if n != rows[table] {
			t.Errorf("%s: %d lines, %d rows counted", table, n, rows[table])
		}
	}
	num := func(s string) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	cents := func(s string) int64 { return num(strings.Replace(s, ".", "", 1)) }
	partsupp := map[[2]int64]bool{}
	read("partsupp", func(f []string) {
		k := [2]int64{num(f[0]), num(f[1])}
		if partsupp[k] || k[0] < 1 || k[0] > 2000 || k[1] < 1 || k[1] > 100 {
			t.Fatalf("partsupp key %v out of range or repeated", k)
		}
		partsupp[k] = true
	})
	totals := map[int64]int64{}
	read("lineitem", func(f []string) {
		part, supp := num(f[1]), num(f[2])
		if !partsupp[[2]int64{part, supp}] {
			t.Fatalf("lineitem of part %d and supplier %d, which is no partsupp row", part, supp)
		}
		price, disc, tax := cents(f[5]), cents(f[6]), cents(f[7])
		if want := tpchRetailPrice(part) * num(f[4]); price != want {
			t.Fatalf("l_extendedprice %d, want %d", price, want)
		}
		totals[num(f[0])] += price * (100 - disc) / 100 * (100 + tax) / 100
	})
	customers := map[int64]bool{}
	read("orders", func(f []string) {
		cust := num(f[1])
		if cust < 1 || cust > 1500 || cust%3 == 0 {
			t.Fatalf("o_custkey %d", cust)
		}
		customers[cust] = true
		if got, want := cents(f[3]), totals[num(f[0])]; got != want {
			t.Fatalf("order %s: o_totalprice %d, its lines make %d", f[0], got, want)
		}
	})
	if len(customers) < 900 {
		t.Errorf("orders reach only %d of the 1,000 customers that may have orders", len(customers))
	}
}

func tableIndex(name string) int {
	for i, t := range tpchTables {
		if t.name == name {
			return i
		}
	}
	panic(name)
}

// TestTypesDiffer: result columns whose types differ from PostgreSQL's are
// named; answers without types (DuckDB's) are not compared.
func TestTypesDiffer(t *testing.T) {
	pg := []string{"l_returnflag text", "avg_qty numeric"}
	if d := typesDiffer(pg, []string{"l_returnflag text", "avg_qty float8"}); d != "avg_qty float8 (postgres: avg_qty numeric)" {
		t.Errorf("%q", d)
	}
	if d := typesDiffer(pg, pg); d != "" {
		t.Errorf("same types: %q", d)
	}
	if d := typesDiffer(pg, nil); d != "" {
		t.Errorf("no types: %q", d)
	}
}
