package engine_test

import (
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// TestIntervalColumns stores interval columns in a keyed table (merge-on-read
// scans) and a table without a key (added by ALTER TABLE): every input form
// of PostgreSQL's interval is stored as PostgreSQL reads it (months, days
// and microseconds kept apart), compares and sorts in PostgreSQL's order
// ('1 mon' = '30 days'), survives UPDATE, ON CONFLICT and DELETE, and
// combines with dates and timestamps. Values print as pgtype.Interval
// {microseconds days months}.
func TestIntervalColumns(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE SCHEMA iv;
		CREATE TABLE iv.k (id bigint PRIMARY KEY, i interval);
		CREATE TABLE iv.n (id bigint);
		ALTER TABLE iv.n ADD COLUMN i interval`)
	mustRun(t, s, `INSERT INTO iv.k VALUES (1, '1 day 02:03:04'), (2, '1 year 2 mons'), (3, 'P1Y2M3DT4H5M6S'),
		(4, '@ 1 day ago'), (5, '-1 days +02:00'), (6, '00:00:00.000001'), (7, NULL), (8, '1 mon'), (9, interval '30 days')`)
	mustRun(t, s, `INSERT INTO iv.n SELECT id, i FROM iv.k`)
	all := []string{"1|{7384000000 1 0 true}", "2|{0 0 14 true}", "3|{14706000000 3 14 true}", "4|{0 -1 0 true}",
		"5|{7200000000 -1 0 true}", "6|{1 0 0 true}", "7|NULL", "8|{0 0 1 true}", "9|{0 30 0 true}"}
	for _, tbl := range []string{"iv.k", "iv.n"} {
		expectRows(t, s, "SELECT id, i FROM "+tbl+" ORDER BY id", all...)
		expectRows(t, s, "SELECT id FROM "+tbl+" ORDER BY i, id", "4", "5", "6", "1", "8", "9", "2", "3", "7")
		expectRows(t, s, "SELECT id FROM "+tbl+" WHERE i = '1 mon' ORDER BY id", "8", "9")
		expectRows(t, s, "SELECT count(*) FROM "+tbl+" GROUP BY i ORDER BY 1 DESC LIMIT 1", "2")
		expectRows(t, s, "SELECT date '2024-01-31' + i FROM "+tbl+" WHERE id IN (2, 8)  ORDER BY id",
			"2025-03-31 00:00:00 +0000 UTC", "2024-02-29 00:00:00 +0000 UTC")
	}
	mustRun(t, s, `UPDATE iv.k SET i = i * 2 WHERE id = 1`)
	mustRun(t, s, `INSERT INTO iv.k VALUES (2, '3 hours') ON CONFLICT (id) DO UPDATE SET i = EXCLUDED.i + iv.k.i`)
	mustRun(t, s, `DELETE FROM iv.k WHERE i > '1 day' AND id > 2`)
	mustRun(t, s, `DELETE FROM iv.n WHERE i > '1 day'`)
	expectRows(t, s, "SELECT id, i FROM iv.k ORDER BY id", "1|{14768000000 2 0 true}", "2|{10800000000 0 14 true}",
		"4|{0 -1 0 true}", "5|{7200000000 -1 0 true}", "6|{1 0 0 true}", "7|NULL")
	expectRows(t, s, "SELECT id FROM iv.n ORDER BY id", "4", "5", "6", "7")

	// The catalog shows the columns as interval.
	expectRows(t, s, `SELECT a.attrelid::regclass::text, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
		WHERE a.attname = 'i' AND a.attrelid IN ('iv.k'::regclass, 'iv.n'::regclass) ORDER BY 1`, "iv.k|interval", "iv.n|interval")
	expectRows(t, s, `SELECT table_name, data_type FROM information_schema.columns WHERE table_schema = 'iv' AND column_name = 'i' ORDER BY 1`,
		"k|interval", "n|interval")

	// Malformed text fails as PostgreSQL's interval input does.
	if _, err := run(t, s, "INSERT INTO iv.n VALUES (10, '1 fortnight')"); sqlerr.Code(err) != "22007" {
		t.Errorf("bad interval: %v, want 22007", err)
	}
	// The bucket hash has no interval form.
	if _, err := run(t, s, "CREATE TABLE iv.pk (i interval PRIMARY KEY)"); sqlerr.Code(err) != "0A000" {
		t.Errorf("interval primary key: %v, want 0A000", err)
	}
}
