package reader_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// TestFileOutsideTableRefused: a snapshot naming a file outside the table's
// directory (another table's file, or a path climbing out of the table) is
// refused with 42501, by CheckFiles and when a unit opens the file, for
// merged and appended reads alike.
func TestFileOutsideTableRefused(t *testing.T) {
	fields := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}
	for _, pk := range [][]string{{"id"}, nil} {
		other := newFixture(t, fields, nil, pk, 1)
		other.write([]string{"id", "v"}, []any{1, "secret"})
		f := newFixture(t, fields, nil, pk, 1)
		f.write([]string{"id", "v"}, []any{1, "mine"})
		f.expect("id=1 v=mine")
		own := f.parts["-5"].Files[0]
		for _, bad := range []string{
			other.parts["-5"].Files[0].Path,
			objstore.LocalURI(filepath.Join(filepath.Dir(f.table.Path[len("file://"):]), "t", "..", "x", "part-x_0000.parquet")),
			f.table.Path + "/../t/" + filepath.Base(own.Path),
		} {
			parts := []catalog.PartitionFiles{{Desc: "-5", Files: []catalog.DataFile{{Path: bad, Size: own.Size, ExistCols: own.ExistCols}}}}
			if err := reader.CheckFiles(f.table, parts); sqlerr.Code(err) != sqlerr.InsufficientPrivilege {
				t.Errorf("CheckFiles(%s): %v (SQLSTATE %s), want 42501", bad, err, sqlerr.Code(err))
			}
			scan := &reader.Scan{Store: objstore.Local{}, Table: f.table, Partitions: parts}
			units, err := scan.Units()
			if err != nil {
				t.Fatal(err)
			}
			if it, err := scan.Open(context.Background(), units[0]); sqlerr.Code(err) != sqlerr.InsufficientPrivilege {
				if it != nil {
					it.Close()
				}
				t.Errorf("opening %s as a file of %s: %v (SQLSTATE %s), want 42501", bad, f.table.Path, err, sqlerr.Code(err))
			}
		}
		if err := reader.CheckFiles(f.table, []catalog.PartitionFiles{*f.parts["-5"]}); err != nil {
			t.Errorf("CheckFiles of the table's own files: %v", err)
		}
	}
}
