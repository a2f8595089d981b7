package writer

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
)

// ccfRecord is n rows shaped like `lakesoul bench ccf`'s: a random-looking
// uuid text key, seven more columns of short text and one bigint.
func ccfRecord(n int) arrow.RecordBatch {
	fields := []arrow.Field{{Name: "uuid", Type: arrow.BinaryTypes.String}}
	for _, c := range []string{"ip", "hostname"} {
		fields = append(fields, arrow.Field{Name: c, Type: arrow.BinaryTypes.String, Nullable: true})
	}
	fields = append(fields, arrow.Field{Name: "requests", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	for _, c := range []string{"name", "city", "job", "phonenum"} {
		fields = append(fields, arrow.Field{Name: c, Type: arrow.BinaryTypes.String, Nullable: true})
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	cities := []string{"Hangzhou", "Berlin", "Lima", "Oslo", "Pune", "Quito", "Rome", "Seoul", "Tunis", "Utah"}
	jobs := []string{"engineer", "analyst", "nurse", "pilot", "chef", "teacher", "driver", "artist"}
	for i := range n {
		h := uint64(i)*0x9e3779b97f4a7c15 ^ 0xbf58476d1ce4e5b9
		h ^= h >> 31
		h *= 0xff51afd7ed558ccd
		h ^= h >> 29
		str := func(f int, s string) { b.Field(f).(*array.StringBuilder).Append(s) }
		str(0, fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", uint32(h>>32), uint16(h>>16), uint16(h), uint16(i>>16), i))
		str(1, fmt.Sprintf("%d.%d.%d.%d", h&255, (h>>8)&255, (h>>16)&255, (h>>24)&255))
		str(2, fmt.Sprintf("host-%x", h>>40))
		b.Field(3).(*array.Int64Builder).Append(int64(h % 100000))
		str(4, fmt.Sprintf("Ada%d", h>>50))
		str(5, cities[(h>>16)%10])
		str(6, jobs[(h>>24)%8])
		str(7, fmt.Sprintf("+86-%011d", h%100000000000))
	}
	return b.NewRecordBatch()
}

// BenchmarkWriteCCF measures Write alone (bucket, sort, gather, Parquet
// encode, local files) on one ccf-shaped batch into 4 buckets.
func BenchmarkWriteCCF(b *testing.B) {
	for _, n := range []int{200_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			rec := ccfRecord(n)
			defer rec.Release()
			w := &Writer{Store: objstore.Local{}, Table: testTable(b, rec.Schema().Fields(), []string{"uuid"}, 4), Intent: layout.RandomNames{}}
			b.ResetTimer()
			for range b.N {
				if _, err := w.Write(context.Background(), rec); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkMergeRunsCCF measures MergeRuns alone on the runs an ingest of
// 2 M ccf-shaped rows in 8 batches leaves in 4 buckets (one upsert COPY
// of `lakesoul bench ccf --scale 1`): reading the runs back, the k-way
// merge by key, gathering and Parquet encoding.
func BenchmarkMergeRunsCCF(b *testing.B) {
	const rows, batches = 2_000_000, 8
	rec := ccfRecord(rows)
	defer rec.Release()
	tbl := testTable(b, rec.Schema().Fields(), []string{"uuid"}, 4)
	b.ResetTimer()
	b.StopTimer()
	for range b.N {
		w := &Writer{Store: objstore.Local{}, Table: tbl, Intent: layout.RandomNames{}, Runs: true}
		cuts := make([][2]int64, batches)
		for i := range cuts {
			cuts[i] = [2]int64{int64(i * rows / batches), int64((i + 1) * rows / batches)}
		}
		parts, _ := writeBatches(b, w, rec, cuts)
		b.StartTimer()
		merged, err := w.MergeRuns(context.Background(), parts)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		for _, op := range merged[0].Ops {
			if err := w.Store.Delete(context.Background(), op.Path); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}
