package bench

import (
	"fmt"
	"strings"
)

// tpchTable is one of TPC-H's eight tables (§1.4): its columns in the
// order generateTPCH writes them, its primary key, and PostgreSQL's
// secondary indexes on it (the foreign keys and the dates the queries
// filter on).
type tpchTable struct {
	name    string
	columns []tpchColumn
	key     []string
	indexes [][]string
}

type tpchColumn struct{ name, typ string }

// TPC-H's identifiers are integers, its decimals numeric(15,2) and its
// strings varchar(n): the specification's fixed-length CHAR(n) columns
// are varchar here because DuckDB has no blank-padded type and the answers
// of every system are compared as text.
var tpchTables = []tpchTable{
	{name: "nation", key: []string{"n_nationkey"}, indexes: [][]string{{"n_regionkey"}}, columns: []tpchColumn{
		{"n_nationkey", "integer"}, {"n_name", "varchar(25)"}, {"n_regionkey", "integer"}, {"n_comment", "varchar(152)"}}},
	{name: "region", key: []string{"r_regionkey"}, columns: []tpchColumn{
		{"r_regionkey", "integer"}, {"r_name", "varchar(25)"}, {"r_comment", "varchar(152)"}}},
	{name: "supplier", key: []string{"s_suppkey"}, indexes: [][]string{{"s_nationkey"}}, columns: []tpchColumn{
		{"s_suppkey", "integer"}, {"s_name", "varchar(25)"}, {"s_address", "varchar(40)"}, {"s_nationkey", "integer"},
		{"s_phone", "varchar(15)"}, {"s_acctbal", "numeric(15,2)"}, {"s_comment", "varchar(101)"}}},
	{name: "customer", key: []string{"c_custkey"}, indexes: [][]string{{"c_nationkey"}}, columns: []tpchColumn{
		{"c_custkey", "integer"}, {"c_name", "varchar(25)"}, {"c_address", "varchar(40)"}, {"c_nationkey", "integer"},
		{"c_phone", "varchar(15)"}, {"c_acctbal", "numeric(15,2)"}, {"c_mktsegment", "varchar(10)"}, {"c_comment", "varchar(117)"}}},
	{name: "part", key: []string{"p_partkey"}, columns: []tpchColumn{
		{"p_partkey", "integer"}, {"p_name", "varchar(55)"}, {"p_mfgr", "varchar(25)"}, {"p_brand", "varchar(10)"},
		{"p_type", "varchar(25)"}, {"p_size", "integer"}, {"p_container", "varchar(10)"}, {"p_retailprice", "numeric(15,2)"},
		{"p_comment", "varchar(23)"}}},
	{name: "partsupp", key: []string{"ps_partkey", "ps_suppkey"}, indexes: [][]string{{"ps_suppkey"}}, columns: []tpchColumn{
		{"ps_partkey", "integer"}, {"ps_suppkey", "integer"}, {"ps_availqty", "integer"}, {"ps_supplycost", "numeric(15,2)"},
		{"ps_comment", "varchar(199)"}}},
	{name: "orders", key: []string{"o_orderkey"}, indexes: [][]string{{"o_custkey"}, {"o_orderdate"}}, columns: []tpchColumn{
		{"o_orderkey", "integer"}, {"o_custkey", "integer"}, {"o_orderstatus", "varchar(1)"}, {"o_totalprice", "numeric(15,2)"},
		{"o_orderdate", "date"}, {"o_orderpriority", "varchar(15)"}, {"o_clerk", "varchar(15)"}, {"o_shippriority", "integer"},
		{"o_comment", "varchar(79)"}}},
	{name: "lineitem", key: []string{"l_orderkey", "l_linenumber"}, indexes: [][]string{{"l_partkey", "l_suppkey"}, {"l_shipdate"}},
		columns: []tpchColumn{
			{"l_orderkey", "integer"}, {"l_partkey", "integer"}, {"l_suppkey", "integer"}, {"l_linenumber", "integer"},
			{"l_quantity", "numeric(15,2)"}, {"l_extendedprice", "numeric(15,2)"}, {"l_discount", "numeric(15,2)"},
			{"l_tax", "numeric(15,2)"}, {"l_returnflag", "varchar(1)"}, {"l_linestatus", "varchar(1)"}, {"l_shipdate", "date"},
			{"l_commitdate", "date"}, {"l_receiptdate", "date"}, {"l_shipinstruct", "varchar(25)"}, {"l_shipmode", "varchar(10)"},
			{"l_comment", "varchar(44)"}}},
}

// columnList is "a integer, b date, …".
func (t tpchTable) columnList() string {
	var cols []string
	for _, c := range t.columns {
		cols = append(cols, c.name+" "+c.typ)
	}
	return strings.Join(cols, ", ")
}

// createSQL is the CREATE TABLE of t under prefix ("" or "s."), with its
// primary key when keyed, and the WITH options.
func (t tpchTable) createSQL(prefix string, keyed bool, with string) string {
	q := "CREATE TABLE " + prefix + t.name + " (" + t.columnList()
	if keyed {
		q += ", PRIMARY KEY (" + strings.Join(t.key, ", ") + ")"
	}
	q += ")"
	if with != "" {
		q += " WITH (" + with + ")"
	}
	return q
}

// duckColumns is read_csv's columns argument: {'a': 'INTEGER', …}.
func (t tpchTable) duckColumns() string {
	var cols []string
	for _, c := range t.columns {
		cols = append(cols, fmt.Sprintf("'%s': '%s'", c.name, c.typ))
	}
	return "{" + strings.Join(cols, ", ") + "}"
}

// tpchBuckets is the hash_bucket_num of a keyed lake table of rows rows.
// A bucket is the unit of the merge-on-read and of a scan's parallelism
// and holds one file after a COPY: tables of 100,000 rows or more get at
// least 4 buckets, so both cores of a small machine have units to scan and
// no single one is left with a long tail, and one more per 2 M rows, so a
// bucket's file stays near 70 MB at larger scales (lineitem's rows take
// about 36 bytes in the lake's files); smaller tables keep one bucket (one
// file), as more would only add files to open. At scale 1 that is 4 buckets
// for lineitem, orders, partsupp, part and customer; at scale 10 lineitem
// gets 30 and orders 8.
func tpchBuckets(rows int64) int {
	if rows < 100_000 {
		return 1
	}
	return int(max(4, (rows+1_999_999)/2_000_000))
}
