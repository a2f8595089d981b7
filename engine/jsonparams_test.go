package engine_test

import (
	"context"
	"slices"
	"testing"

	"github.com/lakesoul-go/lakesoul/schema"
)

// Parameters compared with or assigned to a jsonb column are described as
// jsonb (3802), as PostgreSQL resolves them, in every context that gives a
// parameter the jsonb type — INSERT, UPDATE, ON CONFLICT DO UPDATE, MERGE,
// comparisons, IN, IS DISTINCT FROM, NULLIF, @>, <@, ||, explicit casts —
// and json columns' as json (114); jsonb operators with a text operand (?,
// ->) keep text. Each statement also runs with the values bound (asyncpg's
// jsonb codec sends exactly these types).
func TestJSONBParameters(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE jp (id bigint PRIMARY KEY, d jsonb, e json)`)
	J, JB, T, I8 := uint32(schema.OIDJSON), uint32(schema.OIDJSONB), uint32(schema.OIDText), uint32(schema.OIDInt8)
	for _, c := range []struct {
		q    string
		want []uint32
		args []any
	}{
		{"INSERT INTO jp (id, d, e) VALUES ($1, $2, $3)", []uint32{I8, JB, J}, []any{int64(1), `{"a": 1}`, `{"b":2}`}},
		{"INSERT INTO jp (id, d) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET d = $3", []uint32{I8, JB, JB}, []any{int64(1), `{}`, `{"a": 2}`}},
		{"INSERT INTO jp (id, d) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET d = $3 WHERE jp.d <> $4", []uint32{I8, JB, JB, JB}, []any{int64(1), `{}`, `{"a": 3}`, `{"x": 0}`}},
		{"UPDATE jp SET d = $1, e = $2 WHERE id = $3", []uint32{JB, J, I8}, []any{`{"a": 4}`, `[1]`, int64(1)}},
		{"MERGE INTO jp t USING (SELECT 2 AS id) s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id, d) VALUES (s.id, $1)", []uint32{JB}, []any{`{"m": 1}`}},
		{"MERGE INTO jp t USING (SELECT 2 AS id) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET d = $1", []uint32{JB}, []any{`{"m": 2}`}},
		{"SELECT id FROM jp WHERE d = $1", []uint32{JB}, []any{`{"a": 4}`}},
		{"SELECT id FROM jp WHERE $1 <> d", []uint32{JB}, []any{`{"a": 4}`}},
		{"SELECT id FROM jp WHERE d IN ($1, $2)", []uint32{JB, JB}, []any{`{"a": 4}`, `{}`}},
		{"SELECT id FROM jp WHERE d IS DISTINCT FROM $1", []uint32{JB}, []any{`{"a": 4}`}},
		{"SELECT NULLIF(d, $1) FROM jp", []uint32{JB}, []any{`{"a": 4}`}},
		{"SELECT id FROM jp WHERE d @> $1", []uint32{JB}, []any{`{"a": 4}`}},
		{"SELECT id FROM jp WHERE $1 <@ d", []uint32{JB}, []any{`{"a": 4}`}},
		{"SELECT d || $1 FROM jp", []uint32{JB}, []any{`{"z": 1}`}},
		{"SELECT $1::jsonb, $2::json FROM jp", []uint32{JB, J}, []any{`{"z": 1}`, `{"y":1}`}},
		{"SELECT id FROM jp WHERE d ? $1", []uint32{T}, []any{"a"}},
		{"SELECT d -> $1 FROM jp", []uint32{T}, []any{"a"}},
	} {
		st, err := s.Parse(context.Background(), c.q, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		if got := st[0].ParamOIDs(); !slices.Equal(got, c.want) {
			t.Errorf("%s: parameter types %v, want %v", c.q, got, c.want)
		}
		mustRun(t, s, c.q, c.args...)
	}
	expectRows(t, s, "SELECT id, d, e FROM jp ORDER BY id", `1|{"a": 4}|[1]`, `2|{"m": 2}|NULL`)
}
