package tests

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc/status"
)

// The write-path property: statements whose input is empty, only NULLs, or
// large (many rows, a 1 MiB value, a bad row at the very end) go through
// every write path — INSERT … SELECT and VALUES, partial upsert, ON
// CONFLICT DO NOTHING / DO UPDATE, RETURNING, UPDATE, DELETE, MERGE, COPY in
// text, CSV and binary, CREATE TABLE AS, a transaction block, Flight SQL's
// ExecuteUpdate and ingest — into primary-key and append tables, partitioned
// or not, with and without CHECK, DEFAULT and NOT NULL. Whatever a
// statement does:
//   - the connection survives (the same client's next statement runs) and
//     the server answers another session;
//   - a failure carries a SQLSTATE and is never XX000 (an internal error is
//     a bug: the zero-row writes of issue 31 were panics);
//   - a failed statement changes nothing (the table's checksum is as
//     before), and a table's constraints hold after every statement;
//   - a statement of no input rows succeeds and changes nothing, and the
//     large valid input is written while the same input with one bad row
//     last is refused whole.

// wpRows is the number of rows of the large inputs.
const wpRows = 20000

// wpTable is a table of the property: every one has columns (id bigint,
// d int, v bigint, w text); constraints and keys vary.
type wpTable struct {
	name string
	ddl  string // column list and options after the name
	pk   bool
	// check: v > 0 is checked; notNullW: w is NOT NULL (DEFAULT 'd').
	check, notNullW bool
}

var wpTables = []wpTable{
	{name: "pk_chk", pk: true, check: true, notNullW: true,
		ddl: "(id bigint, d int, v bigint CHECK (v > 0), w text NOT NULL DEFAULT 'd', PRIMARY KEY (id))"},
	{name: "ap_chk", check: true, notNullW: true,
		ddl: "(id bigint, d int, v bigint CHECK (v > 0), w text NOT NULL DEFAULT 'd')"},
	{name: "pk_part", pk: true, check: true,
		ddl: "(id bigint, d int, v bigint CHECK (v > 0), w text DEFAULT 'd', PRIMARY KEY (id)) PARTITION BY LIST (d) WITH (hash_bucket_num = 2)"},
	{name: "ap_part", check: true, notNullW: true,
		ddl: "(id bigint, d int, v bigint CHECK (v > 0), w text NOT NULL DEFAULT 'd') PARTITION BY LIST (d)"},
	{name: "pk_plain", pk: true, ddl: "(id bigint, d int, v bigint, w text, PRIMARY KEY (id))"},
}

// wpSource is an input: a query of columns (id, d, v, w), and the same
// rows for COPY and Flight ingest.
type wpSource struct {
	name string
	sql  func(table string) string
	rows [][]*string // nil = NULL; columns id, d, v, w
	// empty: no rows; large: the valid large input; bad: large with a row
	// that breaks CHECK (v > 0) last.
	empty, large, bad bool
}

func sp(s string) *string { return &s }

func wpSources() []wpSource {
	big := strings.Repeat("x", 1<<20)
	largeRows := func(lastV string) [][]*string {
		out := make([][]*string, wpRows)
		for i := range out {
			g := 1000 + i
			w := "w" + strconv.Itoa(g)
			if i == 0 {
				w = big
			}
			v := strconv.Itoa(g)
			if i == wpRows-1 && lastV != "" {
				v = lastV
			}
			out[i] = []*string{sp(strconv.Itoa(g)), sp(strconv.Itoa(g % 3)), sp(v), sp(w)}
		}
		return out
	}
	largeSQL := func(lastV string) func(string) string {
		v := "g::bigint"
		if lastV != "" {
			v = fmt.Sprintf("CASE WHEN g = %d THEN %s ELSE g END::bigint", 1000+wpRows-1, lastV)
		}
		return func(string) string {
			return fmt.Sprintf("SELECT g::bigint AS id, (g %% 3)::int AS d, %s AS v, "+
				"CASE WHEN g = 1000 THEN repeat('x', %d) ELSE 'w' || g END AS w FROM generate_series(1000, %d) g",
				v, 1<<20, 1000+wpRows-1)
		}
	}
	return []wpSource{
		{name: "empty", empty: true,
			sql: func(t string) string { return "SELECT id, d, v, w FROM " + t + " WHERE false" }},
		{name: "nulls", rows: [][]*string{{nil, nil, nil, nil}},
			sql: func(string) string {
				return "SELECT NULL::bigint AS id, NULL::int AS d, NULL::bigint AS v, NULL::text AS w"
			}},
		{name: "nullvals", rows: [][]*string{{sp("7"), nil, nil, nil}, {sp("2"), nil, nil, nil}},
			sql: func(string) string {
				return "SELECT * FROM (VALUES (7::bigint, NULL::int, NULL::bigint, NULL::text), (2, NULL, NULL, NULL)) s(id, d, v, w)"
			}},
		{name: "large", large: true, rows: largeRows(""), sql: largeSQL("")},
		{name: "large_bad", bad: true, rows: largeRows("-1"), sql: largeSQL("-1")},
	}
}

// wpStatements are the SQL write statements of a table and a source.
func wpStatements(tb wpTable, src wpSource, ns string, seq *int) []string {
	t := ns + "." + tb.name
	s := src.sql(t)
	out := []string{
		"INSERT INTO " + t + " " + s,
		"INSERT INTO " + t + " (id, v) SELECT id, v FROM (" + s + ") s",
		"INSERT INTO " + t + " " + s + " RETURNING id, v",
		"UPDATE " + t + " SET v = v + 1, w = 'u' WHERE id IN (SELECT id FROM (" + s + ") s)",
		"UPDATE " + t + " SET v = NULL WHERE id IN (SELECT id FROM (" + s + ") s) RETURNING id",
		"DELETE FROM " + t + " WHERE id IN (SELECT id FROM (" + s + ") s) RETURNING id",
	}
	if tb.pk { // MERGE and ON CONFLICT need a key (append tables: 0A000, 42P10)
		out = append(out,
			"MERGE INTO "+t+" t USING ("+s+") s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v "+
				"WHEN NOT MATCHED THEN INSERT (id, d, v, w) VALUES (s.id, s.d, s.v, s.w)",
			"INSERT INTO "+t+" "+s+" ON CONFLICT (id) DO NOTHING",
			"INSERT INTO "+t+" "+s+" ON CONFLICT (id) DO UPDATE SET v = excluded.v, w = excluded.w RETURNING *")
	}
	if !src.large && !src.bad {
		*seq++
		out = append(out, fmt.Sprintf("CREATE TABLE %s.ctas_%d AS %s", ns, *seq, s))
	}
	if src.name == "nulls" {
		out = append(out, "INSERT INTO "+t+" VALUES (NULL, NULL, NULL, NULL)", "INSERT INTO "+t+" (id) VALUES (9)",
			"INSERT INTO "+t+" (id, d) VALUES (NULL, NULL), (10, NULL)")
	}
	return out
}

// wpCheck is the check after a statement on a table: its constraints hold
// (no v ≤ 0 under CHECK, no NULL w under NOT NULL, no NULL key) and its
// checksum, to compare with the one before.
func wpCheck(t *testing.T, ctx context.Context, obs *pgx.Conn, tb wpTable, table, what string) string {
	t.Helper()
	var sum string
	var badV, nullW, nullID int64
	err := obs.QueryRow(ctx, "SELECT count(*) || ':' || coalesce(sum(id), 0) || ':' || coalesce(sum(v), 0) || ':' || "+
		"coalesce(sum(length(w)), 0) || ':' || count(w) || ':' || count(d), "+
		"count(*) FILTER (WHERE v <= 0), count(*) FILTER (WHERE w IS NULL), count(*) FILTER (WHERE id IS NULL) FROM "+table).
		Scan(&sum, &badV, &nullW, &nullID)
	if err != nil {
		t.Fatalf("%s: the observer's check of %s failed: %v", what, table, err)
	}
	if tb.check && badV > 0 {
		t.Errorf("%s: %s has %d rows breaking CHECK (v > 0)", what, table, badV)
	}
	if tb.notNullW && nullW > 0 {
		t.Errorf("%s: %s has %d NULL w under NOT NULL", what, table, nullW)
	}
	if tb.pk && nullID > 0 {
		t.Errorf("%s: %s has %d NULL keys", what, table, nullID)
	}
	return sum
}

// wpOutcome checks one statement's outcome: no error, or an error with a
// SQLSTATE other than XX000 (anything else — a dropped connection — fails
// the test at once). It returns the SQLSTATE ("" on success).
func wpOutcome(t *testing.T, what string, err error, flight bool) string {
	t.Helper()
	if err == nil {
		return ""
	}
	code := ""
	if flight {
		code = flightSQLState(err)
	} else {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			code = pe.Code
		}
	}
	switch code {
	case "":
		t.Fatalf("%s: failed without a SQLSTATE (connection dropped?): %v", what, err)
	case "XX000":
		t.Errorf("%s: internal error: %v", what, err)
	}
	return code
}

var flightStateRE = regexp.MustCompile(`SQLSTATE ([0-9A-Z]{5})`)

// flightSQLState is the SQLSTATE a Flight SQL error's message leads with.
func flightSQLState(err error) string {
	if err == nil {
		return ""
	}
	st, ok := status.FromError(err)
	msg := err.Error()
	if ok {
		msg = st.Message()
	}
	if m := flightStateRE.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// wpExpect checks what the property demands of a statement's result: no
// input → success and no change; the valid large input of an INSERT →
// success; the large input with a bad row last into a checked table →
// 23514 and no change; any failure → no change.
func wpExpect(t *testing.T, what string, tb wpTable, src wpSource, plainInsert bool, code, before, after string) {
	t.Helper()
	switch {
	case src.empty && code != "":
		t.Errorf("%s: a statement without input rows failed with %s", what, code)
	case src.empty && before != after:
		t.Errorf("%s: a statement without input rows changed the table: %s → %s", what, before, after)
	case src.large && plainInsert && code != "":
		t.Errorf("%s: the valid large input failed with %s", what, code)
	case src.bad && plainInsert && tb.check && code != "23514":
		t.Errorf("%s: the large input with a bad last row gave %q, want 23514", what, code)
	}
	if code != "" && before != after {
		t.Errorf("%s: failed with %s but changed the table: %s → %s", what, code, before, after)
	}
}

// TestWritePathsProperty is the write-path property above, over pgwire and
// Flight SQL, as a workspace user.
func TestWritePathsProperty(t *testing.T) {
	s, addr := flightServerT(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin, "SELECT lakesoul.create_workspace('wp_ws')",
		"SELECT lakesoul.create_user('wp_user', 'wp-pw', 'wp_ws', admin => true)")
	user := s.login(t, ctx, "wp_user", "wp-pw")
	obs := s.login(t, ctx, "wp_user", "wp-pw") // another session: must keep working
	cl, fctx := mustFlight(t, ctx, addr, "wp_user", "wp-pw")
	sources := wpSources()
	seq := 0

	for _, door := range []string{"pgwire", "flight"} {
		ns := "wp_" + door
		mustExec(t, ctx, user, "CREATE SCHEMA "+ns)
		for _, tb := range wpTables {
			table := ns + "." + tb.name
			mustExec(t, ctx, user, "CREATE TABLE "+table+" "+tb.ddl,
				"INSERT INTO "+table+" VALUES (1, 1, 1, 'a'), (2, 2, 2, 'b'), (3, 1, 3, 'c')")
			for _, src := range sources {
				stmts := wpStatements(tb, src, ns, &seq)
				for i, q := range stmts {
					what := fmt.Sprintf("%s %s/%s: %s", door, tb.name, src.name, shorten(q))
					before := wpCheck(t, ctx, obs, tb, table, what)
					var err error
					if door == "pgwire" {
						_, err = user.Exec(ctx, q)
					} else {
						_, err = cl.ExecuteUpdate(fctx, q)
					}
					code := wpOutcome(t, what, err, door == "flight")
					after := wpCheck(t, ctx, obs, tb, table, what)
					if !strings.HasPrefix(q, "CREATE TABLE") {
						wpExpect(t, what, tb, src, i == 0, code, before, after)
					}
					wpAlive(t, ctx, user, cl, fctx, what)
				}
				if door == "pgwire" {
					wpCopies(t, ctx, user, obs, tb, table, src)
					if !src.large && !src.bad {
						wpBlock(t, ctx, user, obs, tb, table, src, stmts)
					}
				} else {
					wpIngest(t, ctx, user, obs, cl, fctx, tb, ns, src)
				}
			}
		}
	}
}

func shorten(q string) string {
	if len(q) > 160 {
		return q[:160] + "…"
	}
	return q
}

// wpAlive checks that the statement's connections still serve.
func wpAlive(t *testing.T, ctx context.Context, user *pgx.Conn, cl *flightsql.Client, fctx context.Context, what string) {
	t.Helper()
	if _, err := user.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatalf("%s: the pgwire connection no longer serves: %v", what, err)
	}
	if _, _, err := flightRows(fctx, cl, "SELECT 1"); err != nil {
		t.Fatalf("%s: the Flight SQL client no longer serves: %v", what, err)
	}
}

// wpCopies runs COPY FROM STDIN of src's rows into the table in text, CSV
// and binary.
func wpCopies(t *testing.T, ctx context.Context, user, obs *pgx.Conn, tb wpTable, table string, src wpSource) {
	t.Helper()
	for _, format := range []string{"text", "csv", "binary"} {
		what := fmt.Sprintf("pgwire %s/%s: COPY (%s)", tb.name, src.name, format)
		before := wpCheck(t, ctx, obs, tb, table, what)
		_, err := user.PgConn().CopyFrom(ctx, bytes.NewReader(copyData(format, src.rows)),
			fmt.Sprintf("COPY %s (id, d, v, w) FROM STDIN WITH (FORMAT %s)", table, format))
		code := wpOutcome(t, what, err, false)
		after := wpCheck(t, ctx, obs, tb, table, what)
		wpExpect(t, what, tb, src, true, code, before, after)
		if _, err := user.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatalf("%s: the connection no longer serves: %v", what, err)
		}
	}
}

// copyData encodes rows (columns bigint, int, bigint, text) for COPY.
func copyData(format string, rows [][]*string) []byte {
	var b bytes.Buffer
	switch format {
	case "binary":
		b.WriteString("PGCOPY\n\xff\r\n\x00")
		b.Write(make([]byte, 8)) // flags, header extension length
		for _, r := range rows {
			binary.Write(&b, binary.BigEndian, int16(len(r)))
			for c, v := range r {
				if v == nil {
					binary.Write(&b, binary.BigEndian, int32(-1))
					continue
				}
				switch c {
				case 0, 2:
					n, _ := strconv.ParseInt(*v, 10, 64)
					binary.Write(&b, binary.BigEndian, int32(8))
					binary.Write(&b, binary.BigEndian, n)
				case 1:
					n, _ := strconv.ParseInt(*v, 10, 32)
					binary.Write(&b, binary.BigEndian, int32(4))
					binary.Write(&b, binary.BigEndian, int32(n))
				default:
					binary.Write(&b, binary.BigEndian, int32(len(*v)))
					b.WriteString(*v)
				}
			}
		}
		binary.Write(&b, binary.BigEndian, int16(-1))
	default:
		sep, null := "\t", `\N`
		if format == "csv" {
			sep, null = ",", ""
		}
		for _, r := range rows {
			for c, v := range r {
				if c > 0 {
					b.WriteString(sep)
				}
				if v == nil {
					b.WriteString(null)
				} else if format == "csv" && c == 3 {
					b.WriteString(`"` + *v + `"`)
				} else {
					b.WriteString(*v)
				}
			}
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// wpBlock runs each statement inside BEGIN … COMMIT in one simple query:
// the same outcomes, and a failure inside the block rolls all of it back.
func wpBlock(t *testing.T, ctx context.Context, user, obs *pgx.Conn, tb wpTable, table string, src wpSource, stmts []string) {
	t.Helper()
	for i, q := range stmts {
		if strings.HasPrefix(q, "CREATE TABLE") {
			continue
		}
		what := fmt.Sprintf("pgwire block %s/%s: %s", tb.name, src.name, shorten(q))
		before := wpCheck(t, ctx, obs, tb, table, what)
		_, err := user.PgConn().Exec(ctx, "BEGIN; "+q+"; COMMIT").ReadAll()
		code := wpOutcome(t, what, err, false)
		if code != "" {
			if _, err := user.Exec(ctx, "ROLLBACK"); err != nil {
				t.Fatalf("%s: ROLLBACK after the failure: %v", what, err)
			}
		}
		after := wpCheck(t, ctx, obs, tb, table, what)
		wpExpect(t, what, tb, src, i == 0, code, before, after)
		if _, err := user.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatalf("%s: the connection no longer serves: %v", what, err)
		}
	}
}

// wpIngest runs Flight SQL ingest of src's rows in one batch (of no rows
// for the empty input). An ingest of no batch at all is not sent: arrow-go's
// client then sends neither schema nor command, and the framework refuses
// the empty stream before the server sees it.
func wpIngest(t *testing.T, ctx context.Context, user, obs *pgx.Conn, cl *flightsql.Client, fctx context.Context, tb wpTable, ns string, src wpSource) {
	t.Helper()
	table := ns + "." + tb.name
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "d", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "w", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, r := range src.rows {
		for c, v := range r {
			if v == nil {
				b.Field(c).AppendNull()
				continue
			}
			switch c {
			case 0, 2:
				n, _ := strconv.ParseInt(*v, 10, 64)
				b.Field(c).(*array.Int64Builder).Append(n)
			case 1:
				n, _ := strconv.ParseInt(*v, 10, 32)
				b.Field(c).(*array.Int32Builder).Append(int32(n))
			default:
				b.Field(c).(*array.StringBuilder).Append(*v)
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	name := tb.name
	opts := &flightsql.ExecuteIngestOpts{Schema: &ns, Table: name, TableDefinitionOptions: &flightsql.TableDefinitionOptions{
		IfNotExist: flightsql.TableDefinitionOptionsTableNotExistOptionFail, IfExists: flightsql.TableDefinitionOptionsTableExistsOptionAppend}}
	what := fmt.Sprintf("flight %s/%s: ingest of %d rows", tb.name, src.name, rec.NumRows())
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	before := wpCheck(t, ctx, obs, tb, table, what)
	_, err = cl.ExecuteIngest(fctx, rdr, opts)
	rdr.Release()
	code := wpOutcome(t, what, err, true)
	after := wpCheck(t, ctx, obs, tb, table, what)
	wpExpect(t, what, tb, src, true, code, before, after)
	wpAlive(t, ctx, user, cl, fctx, what)
}
