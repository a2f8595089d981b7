package reader_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesoul-go/lakesoul/reader"
)

// TestMergeRandomUpserts checks merges of many files against a model of
// LakeSoul's rule (a key's last-written row wins; a CDC delete removes it):
// keys from a small domain so that files repeat keys, often within one
// write (equal keys adjacent in a file, runs crossing the fixture's 3-row
// batches), for bigint and text keys, plain and CDC tables. The fixture
// reads every case in key order and unordered (window merges) and requires
// them to agree.
func TestMergeRandomUpserts(t *testing.T) {
	op := arrow.Field{Name: "op", Type: arrow.BinaryTypes.String, Nullable: true}
	textID := arrow.Field{Name: "id", Type: arrow.BinaryTypes.String}
	for _, c := range []struct {
		name   string
		id     arrow.Field
		cdc    bool
		files  int
		domain int
	}{
		{"bigint", idF, false, 12, 40},
		{"text", textID, false, 12, 40},
		{"bigint-many-files", idF, false, 60, 25},
		{"text-cdc", textID, true, 20, 30},
		{"bigint-cdc", idF, true, 20, 30},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(len(c.name))))
			fields := []arrow.Field{c.id, nameF}
			if c.cdc {
				fields = append(fields, op)
			}
			f := newFixture(t, fields, nil, []string{"id"}, 2)
			if c.cdc {
				withOps(f, map[string]string{reader.CDCColumnProperty: "op"})
			}
			key := func(k int) any {
				if c.id.Type.ID() == arrow.STRING {
					return fmt.Sprintf("key-%03d", k) // shared 8-byte prefixes
				}
				return k
			}
			model := map[string]string{}
			cols := []string{"id", "name"}
			if c.cdc {
				cols = append(cols, "op")
			}
			seq := 0
			for range c.files {
				var rows [][]any
				for range 1 + rng.IntN(12) {
					k := rng.IntN(c.domain)
					seq++
					name := fmt.Sprintf("v%d", seq)
					id := fmt.Sprintf("id=%v", key(k))
					row := []any{key(k), name}
					if c.cdc {
						o := []string{"insert", "update", "delete"}[rng.IntN(3)]
						row = append(row, o)
						if o == "delete" {
							delete(model, id)
						} else {
							model[id] = fmt.Sprintf("%s name=%s op=%s", id, name, o)
						}
					} else {
						model[id] = fmt.Sprintf("%s name=%s", id, name)
					}
					rows = append(rows, row)
				}
				f.write(cols, rows...)
			}
			var want []string
			for _, v := range model {
				want = append(want, v)
			}
			sort.Strings(want)
			f.expect(want...)
		})
	}
}
