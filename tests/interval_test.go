package tests

import (
	"testing"
)

// intervalScript creates interval columns in a keyed table and one
// without a key and works on them as a PostgreSQL user would (issue 35,
// item 5): literals in every input form PostgreSQL reads, its order and
// equality ('1 mon' = '30 days'), arithmetic with dates and timestamps,
// aggregates, justify_*, extract, each IntervalStyle, UPDATE, ON CONFLICT,
// MERGE and DELETE. TestIntervalDifferential runs it on lakesoul and on
// PostgreSQL.
var intervalScript = []string{
	`CREATE SCHEMA ivd`,
	`CREATE TABLE ivd.k (id int, i interval, d date, ts timestamp, tz timestamptz, PRIMARY KEY (id))`,
	`CREATE TABLE ivd.n (id int, note text)`,
	`ALTER TABLE ivd.n ADD COLUMN i interval`,
	`INSERT INTO ivd.k VALUES
		(1, '1 day 02:03:04', '2024-01-31', '2024-01-31 10:00', '2024-03-30 12:00+00'),
		(2, '1 year 2 mons', '2024-02-29', '2024-02-29 00:00', '2024-10-26 23:30+00'),
		(3, 'P1Y2M3DT4H5M6S', '2023-12-31', '2023-12-31 23:59:59.5', '2024-01-01 00:00+00'),
		(4, '@ 1 day ago', '2024-01-01', '2024-01-01 00:00', '2024-01-01 00:00+00'),
		(5, '-1 days +02:00', '2024-01-01', '2024-01-01 00:00', NULL),
		(6, '00:00:00.000001', '2024-01-01', NULL, '2024-01-01 00:00+00'),
		(7, NULL, '2024-01-01', '2024-01-01 00:00', '2024-01-01 00:00+00'),
		(8, '1 mon', '2024-01-31', '2024-01-31 00:00', '2024-01-31 00:00+00'),
		(9, interval '30 days', '2024-01-31', '2024-01-31 00:00', '2024-01-31 00:00+00'),
		(10, '1.5 years -3.25 days 27:00:00.25', '2024-01-31', '2024-01-31 00:00', '2024-01-31 00:00+00'),
		(11, '2 weeks 3 hours 4 minutes 5.678 seconds', '2024-01-31', '2024-01-31 00:00', '2024-01-31 00:00+00'),
		(12, '-178000000 years', '2024-01-31', '2024-01-31 00:00', '2024-01-31 00:00+00')`,
	`INSERT INTO ivd.n SELECT id, 'copy', i FROM ivd.k`,
	`SELECT id, i FROM ivd.k ORDER BY id`,
	`SELECT id, i FROM ivd.n ORDER BY id`,
	`SELECT id, i FROM ivd.k ORDER BY i, id`,
	`SELECT id, i FROM ivd.n ORDER BY i DESC NULLS LAST, id`,
	// Which of equal intervals ('1 mon', '30 days') a group shows is the
	// plan's choice in PostgreSQL too: the groups are compared by their ids.
	`SELECT min(id), max(id), count(*) FROM ivd.n GROUP BY i ORDER BY i NULLS FIRST`,
	`SELECT id FROM ivd.k WHERE i > '1 day' ORDER BY id`,
	`SELECT id FROM ivd.n WHERE i = '1 mon' ORDER BY id`,
	`SELECT id FROM ivd.k WHERE i BETWEEN '-1 day' AND interval '1 day 3 hours' ORDER BY id`,
	`SELECT id, d + i, ts + i, ts - i, tz + i, tz - i FROM ivd.k WHERE id < 12 ORDER BY id`,
	`SELECT id, i * 2, i / 4, -i, i + interval '1 hour', i - '1 mon' FROM ivd.k WHERE id < 12 ORDER BY id`,
	`SELECT id, ts - (ts - i) FROM ivd.k WHERE id < 12 ORDER BY id`,
	`SELECT min(i), max(i) FROM ivd.k`,
	`SELECT sum(i), avg(i) FROM ivd.k WHERE id < 12`,
	`SELECT id % 3, sum(i), avg(i), sum(i) FILTER (WHERE id > 2), avg(i * 1.5) FROM ivd.n WHERE id < 12 GROUP BY 1 ORDER BY 1`,
	`SELECT sum(i), avg(i) FROM ivd.k WHERE id > 100`,
	`SELECT i / 0 FROM ivd.k WHERE id = 1`,
	`SELECT id, i * 0.3, 2.5 * i, i / 3.7, i / 7 FROM ivd.n WHERE id < 12 ORDER BY id`,
	`SELECT id, justify_hours(i), justify_days(i), justify_interval(i) FROM ivd.k ORDER BY id`,
	`SELECT id, extract(epoch FROM i), extract(year FROM i), extract(month FROM i), extract(day FROM i),
		extract(hour FROM i), extract(minute FROM i), extract(second FROM i), extract(microseconds FROM i) FROM ivd.k ORDER BY id`,
	`SET intervalstyle = iso_8601`,
	`SELECT id, i FROM ivd.k ORDER BY id`,
	`SET intervalstyle = sql_standard`,
	`SELECT id, i FROM ivd.n ORDER BY id`,
	`SET intervalstyle = postgres_verbose`,
	`SELECT id, i FROM ivd.k ORDER BY id`,
	`RESET intervalstyle`,
	`UPDATE ivd.k SET i = i * 2 WHERE id = 1`,
	`UPDATE ivd.n SET i = i + '1 day' WHERE i < '0'`,
	`INSERT INTO ivd.k (id, i) VALUES (2, '3 hours'), (13, 'PT0.5S') ON CONFLICT (id) DO UPDATE SET i = EXCLUDED.i + ivd.k.i`,
	`MERGE INTO ivd.k t USING (VALUES (3, interval '1 sec'), (14, interval '-1 mon')) AS s(id, i) ON t.id = s.id
		WHEN MATCHED THEN UPDATE SET i = t.i - s.i WHEN NOT MATCHED THEN INSERT (id, i) VALUES (s.id, s.i)`,
	`DELETE FROM ivd.k WHERE i > '1 day' AND id > 8`,
	`DELETE FROM ivd.n WHERE i > '1 day'`,
	`SELECT id, i, d, ts, tz FROM ivd.k ORDER BY id`,
	`SELECT id, note, i FROM ivd.n ORDER BY id`,
	`SELECT pg_typeof(i)::text, count(*) FROM ivd.k GROUP BY 1`,
	`INSERT INTO ivd.n (id, i) VALUES (20, '1 fortnight')`,
	`SELECT id, i FROM ivd.n WHERE i = 'soon'`,
}

// TestIntervalDifferential runs intervalScript on lakesoul and on
// PostgreSQL (a scratch database of the catalog cluster) and compares each
// statement's command tag and rows as text, or its SQLSTATE.
func TestIntervalDifferential(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	lake := srv.connect(t)
	ref := srv.referenceDB(t, "intervalref")
	mustExec(t, ctx, ref, "SET TimeZone = 'UTC'")
	for _, q := range intervalScript {
		got, want := statementOutcome(ctx, lake, q), statementOutcome(ctx, ref, q)
		if got != want {
			t.Errorf("%s:\nlakesoul: %s\npostgres: %s", q, got, want)
		}
	}
}
