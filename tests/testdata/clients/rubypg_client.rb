# ruby-pg (Debian's ruby-pg) against lakesoul serve, as a Ruby application
# (or ActiveRecord underneath) does first: its schema twice, CRUD with
# exec_params and a prepared statement (untyped $n, also in expressions),
# RETURNING, an upsert, a transaction rolled back and one committed, typed
# results (PG::BasicTypeMapForResults) and ActiveRecord's reflection
# queries (columns by pg_attribute of a ::regclass, the primary key by
# pg_index). One line per fact; any error raises. Arguments: the conninfo, a
# schema name of the test's own.
require 'pg'

conninfo, schema = ARGV
conn = PG.connect(conninfo)
conn.exec("SET intervalstyle = iso_8601") # ActiveRecord sends it at connect
conn.exec("DROP SCHEMA IF EXISTS #{schema} CASCADE")
2.times do
  conn.exec("CREATE SCHEMA IF NOT EXISTS #{schema}")
  conn.exec("CREATE TABLE IF NOT EXISTS #{schema}.items (id bigserial PRIMARY KEY, name varchar NOT NULL, qty integer, price numeric(10,2))")
end
puts "SCHEMA"

id = conn.exec_params("INSERT INTO #{schema}.items (name, qty, price) VALUES ($1, $2, $3) RETURNING id", ['pen', 3, '1.50']).getvalue(0, 0)
conn.prepare('ins', "INSERT INTO #{schema}.items (name, qty, price) VALUES ($1, $2, $3)")
conn.exec_prepared('ins', ['ink', 1, '9.99'])
puts "RETURNING #{id}"
puts "UPDATED #{conn.exec_params("UPDATE #{schema}.items SET qty = qty + $1 WHERE id = $2", [4, id]).cmd_tuples}"
conn.exec_params("INSERT INTO #{schema}.items (id, name, qty) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, qty = EXCLUDED.qty",
                 [id, 'pencil', 10])
conn.transaction { |c| c.exec_prepared('ins', ['tmp', 0, '0']); raise PG::Error, 'roll back' } rescue nil
conn.transaction { |c| c.exec_prepared('ins', ['cap', 2, '0.25']) }
conn.type_map_for_results = PG::BasicTypeMapForResults.new(conn)
rows = conn.exec("SELECT name, qty, price FROM #{schema}.items ORDER BY id").values
puts "ROWS #{rows.map { |n, q, p| "#{n}:#{q.inspect}:#{p.to_s('F')}" }.join(',')}"

cols = conn.exec_params(<<~SQL, ["#{schema}.items"]).values
  SELECT a.attname, format_type(a.atttypid, a.atttypmod), pg_get_expr(d.adbin, d.adrelid), a.attnotnull
    FROM pg_attribute a LEFT JOIN pg_attrdef d ON a.attrelid = d.adrelid AND a.attnum = d.adnum
   WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
   ORDER BY a.attnum
SQL
puts "COLUMNS #{cols.map { |c| c.map(&:to_s).join(':') }.join(',')}"
pk = conn.exec_params(<<~SQL, ["#{schema}.items"]).values.flatten
  SELECT a.attname FROM pg_index i
    JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
   WHERE i.indrelid = $1::regclass AND i.indisprimary
SQL
puts "PRIMARY_KEY #{pk.join(',')}"
conn.close
puts "DONE"
