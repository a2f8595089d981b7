-- Queries that read no relation, one per line. The engine's
-- TestNoRelationCorpus requires each to take the DuckDB route and every
-- function, operator and cast of that route (engine/nolake.go) to be used
-- here; TestDifferential (tests/) compares each with PostgreSQL itself.
SELECT 1
SELECT 1 AS one, 'a' AS a, NULL AS n, true AS t, 1.5 AS f, 9223372036854775807 AS big
SELECT 'abc', -5, - 2.25
VALUES (1, 'a'), (2, 'b')
SELECT x, y FROM (VALUES (1, 'a'), (2, NULL)) v(x, y) ORDER BY x
SELECT * FROM (VALUES (3), (1), (2)) v(x) ORDER BY x DESC LIMIT 2 OFFSET 0
WITH t(n) AS (VALUES (1), (2), (3)) SELECT sum(n), count(*), count(n), min(n), max(n) FROM t
SELECT 1 UNION SELECT 2 ORDER BY 1
SELECT 1 INTERSECT SELECT 1
SELECT 2 EXCEPT SELECT 1
SELECT repeat('ab', 3), repeat('x', 0), repeat('x', -1), repeat('', 5), repeat(NULL, 2)
SELECT lpad('hi', 5), lpad('hi', 5, 'xy'), lpad('hello', 3), lpad('hi', 5, ''), lpad('hi', -1, 'x'), lpad('héllo', 7, 'é')
SELECT rpad('hi', 5), rpad('hi', 5, 'xy'), rpad('hello', 3), rpad('hi', 5, ''), rpad('hé', 4, 'ü')
SELECT 'a' || 'b', 'x' || NULL, ('a' || 'b') || 'c'
SELECT concat('a', 'b', 'c'), concat('a', NULL, 'c'), concat(NULL), concat_ws(',', 'a', NULL, 'b'), concat_ws(NULL, 'a', 'b'), concat_ws('-', 'x')
SELECT replace('abcabc', 'b', 'XYZ'), replace('abc', '', 'x'), replace('aaa', 'aa', 'b'), replace(NULL, 'a', 'b')
SELECT length('héllo'), char_length('abc'), character_length(''), strpos('hello', 'll'), strpos('hello', 'z'), ascii('A'), ascii('é')
SELECT md5('abc'), reverse('héllo'), starts_with('hello', 'he'), starts_with('hello', 'lo')
SELECT btrim('  x  '), btrim('xxaxx', 'x'), ltrim('  x  '), ltrim('xxa', 'x'), rtrim('  x  '), rtrim('axx', 'x')
SELECT abs(-5), abs(-2.5), abs(-1.5::float8), ceil(1.2), ceiling(-1.2), floor(1.8), ceil(1.5::float8), floor(-1.5::float8)
SELECT round(2.5), round(-2.5), round(2.567, 2), round(2.5::float8), round(3.5::float8), round(1234.5, -2)
SELECT mod(7, 3), mod(-7, 3), 7 % 3, -7 % 3, 7 / 2, -7 / 2, 7.0::float8 / 2::float8
SELECT sqrt(2::float8), sqrt(16::float8), pi()
SELECT sqrt(-1::float8)
SELECT 1 + 2, 1.5 + 2, 0.1 + 0.2, 0.1::float8 + 0.2::float8, 3 - 5, 1.25 * 4, 2 * 3.0::float8, 9223372036854775807 - 1
SELECT 1.50 * 2.0, 10 - 2.5, 2::int8 * 3, 5::int2 + 1::int2
SELECT 1/0
SELECT 1 % 0
SELECT mod(1, 0)
SELECT 1.5::float8 / 0::float8
SELECT 2147483647 + 1
SELECT 9223372036854775807 + 1
SELECT 2147483647 * 2
SELECT '1a'::int
SELECT '99999999999'::int
SELECT ' 42 '::int, '-7'::int4, '+3'::int8, '12'::int2, '123456789012'::int8
SELECT '12.5'::int
SELECT '1e3'::int
SELECT 99999::int2
SELECT 2.5::int, 3.5::int, -2.5::int, 2.5::float8::int, 3.5::float8::int, 1.9::int8
SELECT '2.50'::numeric, '1e3'::numeric, 5::numeric, 2.5::numeric(5, 2), 7::int8::numeric
SELECT 'abc'::numeric
SELECT '1.5'::float8, '1e3'::float8, 1::float8, 2.5::float8
SELECT 'x'::float8
SELECT 1::text, 2.50::text, true::text, 1.5::float8::text, 0.1::float8::text, date '2026-01-02'::text, timestamp '2026-01-02 03:04:05.5'::text
SELECT 1::bool, 0::bool, true::bool, 5::int4::bool
SELECT date '2026-01-31' + 1, date '2026-03-01' - 1, date '2026-03-01' - date '2026-01-01', '2026-01-02'::date, timestamp '2026-01-02 10:00'::date
SELECT timestamp '2026-01-02 10:00:00' - timestamp '2026-01-01 08:30:00', date '2026-01-02'::timestamp, '2026-01-02 03:04:05.25'::timestamp
SELECT timestamp '2026-01-03' + (timestamp '2026-01-02 12:00' - timestamp '2026-01-01'), (timestamp '2026-01-02' - timestamp '2026-01-01') * 3, (timestamp '2026-01-05' - timestamp '2026-01-01') - (timestamp '2026-01-02' - timestamp '2026-01-01')
SELECT date_trunc('month', timestamp '2026-05-17 10:11:12'), date_trunc('hour', timestamp '2026-05-17 10:11:12')
SELECT extract(year FROM date '2026-05-17'), extract(dow FROM date '2026-05-17'), extract(second FROM timestamp '2026-05-17 10:11:12.5'), extract(hour FROM timestamp '2026-05-17 10:11:12' - timestamp '2026-05-16 09:00'), extract(milliseconds FROM timestamp '2026-05-17 10:11:12.5')
SELECT to_char(timestamp '2026-05-17 13:04:05', 'YYYY-MM-DD HH24:MI:SS'), to_char(date '2026-05-17', 'DD.MM.YYYY')
SELECT '{"a": 1, "b": [1, 2]}'::jsonb, '{"b": 1, "a": 2}'::json, '[1, 2, 3]'::jsonb -> 1, '{"a": {"b": "x"}}'::jsonb -> 'a' ->> 'b', '{"a": 1}'::json ->> 'a', '[4, 5]'::json -> 0
SELECT jsonb_typeof('[1]'::jsonb), json_typeof('{}'::json), jsonb_typeof(NULL)
SELECT '{bad'::jsonb
SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid
SELECT '\x414243'::bytea, 'abc'::bytea
SELECT ARRAY[1, 2, 3], ARRAY['a', NULL], (ARRAY[10, 20, 30])[2], (ARRAY[1, 2])[5], array_length(ARRAY[1, 2, 3], 1), cardinality(ARRAY['x', 'y'])
SELECT 2 = ANY (ARRAY[1, 2, 3]), 5 = ALL (ARRAY[5, 5]), 3 <> ALL (ARRAY[1, 2])
SELECT u FROM unnest(ARRAY[3, 1, 2]) u ORDER BY u
SELECT unnest(ARRAY['a', 'b'])
SELECT g FROM generate_series(1, 5) g ORDER BY g
SELECT g FROM generate_series(10, 1, -3) g ORDER BY g DESC
SELECT sum(g), count(*) FROM generate_series(1, 100000) g
SELECT g FROM generate_series(1, 3) g WHERE g > 1 AND g <> 3 OR g IS NULL
SELECT count(*) FROM generate_series(5000000000, 5000000010) g
SELECT g FROM generate_series(1, 3, 0) g
SELECT 1 < 2, 1 <= 1, 1 != 2, 'a' < 'b', 'B' < 'a', 2.5 >= 2, true > false, date '2026-01-01' < timestamp '2026-01-01 00:00:01', (timestamp '2026-01-02' - timestamp '2026-01-01') > (timestamp '2026-01-01 23:00' - timestamp '2026-01-01')
SELECT 1 IN (1, 2), 'x' IN ('a', 'b'), 3 NOT IN (1, 2), 5 BETWEEN 1 AND 10, 5 NOT BETWEEN 6 AND 7, 1 IS DISTINCT FROM NULL, NULL IS NOT DISTINCT FROM NULL, nullif(1, 1), nullif('a', 'b')
SELECT coalesce(NULL, 2), coalesce(NULL, 'x'), greatest(1, 5, 3), least(1.5, 0.5), greatest(NULL, 2), least('b', 'a'), greatest(1, NULL, 3)
SELECT CASE WHEN 1 > 2 THEN 'a' WHEN 2 > 1 THEN 'b' END, CASE 2 WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE 'many' END, CASE WHEN false THEN 1 END
SELECT NULL IS NULL, 1 IS NOT NULL, true IS TRUE, NULL IS UNKNOWN, NOT false, true AND NULL, false OR NULL
SELECT EXISTS (SELECT 1), (SELECT 2), 1 IN (SELECT 1), 2 > ALL (SELECT 1)
SELECT (SELECT x FROM (VALUES (1), (2)) v(x))
SELECT x FROM (SELECT 1 AS x) a JOIN (SELECT 1 AS x) b USING (x)
SELECT a.x, b.y FROM (VALUES (1), (2)) a(x) LEFT JOIN (VALUES (2, 'two')) b(x, y) ON a.x = b.x ORDER BY a.x
SELECT DISTINCT x FROM (VALUES (1), (1), (2)) v(x) ORDER BY x
SELECT x, count(*) FROM (VALUES (1), (1), (2)) v(x) GROUP BY x HAVING count(*) > 1
SELECT max(x) - min(x), min('b'), max(date '2026-01-01') FROM (VALUES (1), (5)) v(x)
SELECT count(DISTINCT x), sum(x) FILTER (WHERE x > 1) FROM (VALUES (1), (1), (2)) v(x)
SELECT '1.50e1'::numeric, '-2.5E-3'::numeric, ' 12 '::numeric, '+.5'::numeric, '0.000'::numeric, '1e-2'::numeric(5, 2)
SELECT '1.2.3'::numeric
SELECT 'abc'::int2
SELECT 32768::int2
SELECT 9223372036854775807 * 2
SELECT '1e400'::float8
SELECT ' -0.5 '::float8, 'NaN'::float8, '-Infinity'::float8
SELECT lpad('x', 3, NULL), repeat('ab', NULL), concat_ws(',', NULL, NULL)
SELECT replace(repeat('ab', 3), 'b', repeat('c', 4)), length(lpad('', 1000, 'xyz')), lpad('ab', 2147483647, '') = 'ab'
SELECT lpad('', 2147483647, 'ab')
