// Package duckarrow hands Arrow columns to DuckDB in bulk: the columns of
// a record batch become the vectors of a table function's output chunk
// without a per-value copy (DuckDB's Arrow conversion takes the buffers as
// they are and keeps the batch alive until its last vector is gone).
//
// duckdb-go exposes neither the C handle of a connection nor that of a
// table function's output chunk, and its Arrow API is behind a build tag.
// The handles are read from duckdb-go's structs at offsets found by
// reflection, and only after reflection confirmed each field's name and
// type (layout.go); when it does not, Available reports why and callers
// keep their value-by-value path. The C functions used are DuckDB's stable
// C API (v1.5.6), declared here and linked from the library duckdb-go
// links.
package duckarrow

/*
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// DuckDB's C API, as duckdb.h declares it (handles are pointers).
typedef uint64_t idx_t;
typedef void *duckdb_connection;
typedef void *duckdb_data_chunk;
typedef void *duckdb_vector;
typedef void *duckdb_logical_type;
typedef void *duckdb_error_data;
typedef void *duckdb_arrow_converted_schema;
typedef int32_t duckdb_type;
struct ArrowSchema;
struct ArrowArray;

duckdb_error_data duckdb_schema_from_arrow(duckdb_connection, struct ArrowSchema *, duckdb_arrow_converted_schema *);
duckdb_error_data duckdb_data_chunk_from_arrow(duckdb_connection, struct ArrowArray *, duckdb_arrow_converted_schema, duckdb_data_chunk *);
void duckdb_destroy_arrow_converted_schema(duckdb_arrow_converted_schema *);
bool duckdb_error_data_has_error(duckdb_error_data);
const char *duckdb_error_data_message(duckdb_error_data);
void duckdb_destroy_error_data(duckdb_error_data *);
idx_t duckdb_data_chunk_get_column_count(duckdb_data_chunk);
idx_t duckdb_data_chunk_get_size(duckdb_data_chunk);
duckdb_vector duckdb_data_chunk_get_vector(duckdb_data_chunk, idx_t);
void duckdb_destroy_data_chunk(duckdb_data_chunk *);
void duckdb_vector_reference_vector(duckdb_vector, duckdb_vector);
duckdb_logical_type duckdb_vector_get_column_type(duckdb_vector);
duckdb_type duckdb_get_type_id(duckdb_logical_type);
uint8_t duckdb_decimal_width(duckdb_logical_type);
uint8_t duckdb_decimal_scale(duckdb_logical_type);
void duckdb_destroy_logical_type(duckdb_logical_type *);
void duckdb_vector_ensure_validity_writable(duckdb_vector);
uint64_t *duckdb_vector_get_validity(duckdb_vector);

// lakesoul_fill_null marks rows [0, n) of output column col NULL.
static void lakesoul_fill_null(duckdb_data_chunk out, idx_t col, idx_t n) {
	duckdb_vector v = duckdb_data_chunk_get_vector(out, col);
	duckdb_vector_ensure_validity_writable(v);
	memset(duckdb_vector_get_validity(v), 0, ((n + 63) / 64) * sizeof(uint64_t));
}

// lakesoul_error takes the message of err (NULL when there is none) and
// destroys err.
static char *lakesoul_error(duckdb_error_data err, const char *fallback) {
	if (err == NULL) {
		return NULL;
	}
	char *msg = NULL;
	if (duckdb_error_data_has_error(err)) {
		const char *m = duckdb_error_data_message(err);
		msg = strdup(m != NULL ? m : fallback);
	}
	duckdb_destroy_error_data(&err);
	return msg;
}

static char *lakesoul_schema(duckdb_connection conn, struct ArrowSchema *schema, duckdb_arrow_converted_schema *out) {
	return lakesoul_error(duckdb_schema_from_arrow(conn, schema, out), "arrow schema conversion failed");
}

// same_type reports whether vectors a and b have the same logical type
// (decimals: the same width and scale).
static bool same_type(duckdb_vector a, duckdb_vector b) {
	duckdb_logical_type ta = duckdb_vector_get_column_type(a);
	duckdb_logical_type tb = duckdb_vector_get_column_type(b);
	duckdb_type ia = duckdb_get_type_id(ta), ib = duckdb_get_type_id(tb);
	bool same = ia == ib;
	if (same && ia == 19) { // DUCKDB_TYPE_DECIMAL
		same = duckdb_decimal_width(ta) == duckdb_decimal_width(tb) && duckdb_decimal_scale(ta) == duckdb_decimal_scale(tb);
	}
	duckdb_destroy_logical_type(&ta);
	duckdb_destroy_logical_type(&tb);
	return same;
}

// lakesoul_fill converts arr (a struct array of n columns, DuckDB taking
// it over) and makes output column dst[i] reference converted column i.
// A column whose converted type is not the output column's is an error:
// nothing is referenced then.
static char *lakesoul_fill(duckdb_connection conn, duckdb_arrow_converted_schema schema, struct ArrowArray *arr,
                           duckdb_data_chunk out, const idx_t *dst, idx_t n) {
	duckdb_data_chunk tmp = NULL;
	char *msg = lakesoul_error(duckdb_data_chunk_from_arrow(conn, arr, schema, &tmp), "arrow conversion failed");
	if (msg != NULL) {
		if (tmp != NULL) {
			duckdb_destroy_data_chunk(&tmp);
		}
		return msg;
	}
	if (tmp == NULL || duckdb_data_chunk_get_column_count(tmp) != n) {
		if (tmp != NULL) {
			duckdb_destroy_data_chunk(&tmp);
		}
		return strdup("arrow conversion returned an unexpected chunk");
	}
	idx_t cols = duckdb_data_chunk_get_column_count(out);
	for (idx_t i = 0; i < n; i++) {
		if (dst[i] >= cols || !same_type(duckdb_data_chunk_get_vector(out, dst[i]), duckdb_data_chunk_get_vector(tmp, i))) {
			duckdb_destroy_data_chunk(&tmp);
			return strdup("arrow conversion gave a column of another type");
		}
	}
	for (idx_t i = 0; i < n; i++) {
		duckdb_vector_reference_vector(duckdb_data_chunk_get_vector(out, dst[i]), duckdb_data_chunk_get_vector(tmp, i));
	}
	duckdb_destroy_data_chunk(&tmp);
	return NULL;
}
*/
import "C"

import (
	"database/sql"
	"errors"
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/cdata"
	"github.com/duckdb/duckdb-go/v2"
)

// MaxRows is the most rows one output chunk takes (DuckDB's vector size).
func MaxRows() int { return duckdb.GetDataChunkCapacity() }

// Conn is the C handle of a DuckDB connection that converts Arrow data
// (it runs no queries). It is valid while the sql.Conn it came from is
// open.
type Conn struct{ p unsafe.Pointer }

// ConnOf returns c's C handle.
func ConnOf(c *sql.Conn) (Conn, error) {
	if err := Available(); err != nil {
		return Conn{}, err
	}
	var out Conn
	err := c.Raw(func(dc any) error {
		d, ok := dc.(*duckdb.Conn)
		if !ok {
			return fmt.Errorf("duckarrow: not a DuckDB connection (%T)", dc)
		}
		out.p = connHandle(d)
		return nil
	})
	if err == nil && out.p == nil {
		err = errors.New("duckarrow: the DuckDB connection has no handle")
	}
	return out, err
}

// Schema is an Arrow schema converted for DuckDB, for batches of exactly
// its columns.
type Schema struct {
	p    C.duckdb_arrow_converted_schema
	cols int
}

// NewSchema converts sch with conn's settings. The caller closes it.
func NewSchema(conn Conn, sch *arrow.Schema) (*Schema, error) {
	cs := (*cdata.CArrowSchema)(C.calloc(1, C.size_t(unsafe.Sizeof(cdata.CArrowSchema{}))))
	defer C.free(unsafe.Pointer(cs))
	cdata.ExportArrowSchema(sch, cs)
	defer cdata.ReleaseCArrowSchema(cs)
	s := &Schema{cols: sch.NumFields()}
	if msg := C.lakesoul_schema(C.duckdb_connection(conn.p), (*C.struct_ArrowSchema)(unsafe.Pointer(cs)), &s.p); msg != nil {
		defer C.free(unsafe.Pointer(msg))
		if s.p != nil {
			C.duckdb_destroy_arrow_converted_schema(&s.p)
		}
		return nil, fmt.Errorf("duckarrow: %s", C.GoString(msg))
	}
	return s, nil
}

// Close frees the converted schema.
func (s *Schema) Close() {
	if s != nil && s.p != nil {
		C.duckdb_destroy_arrow_converted_schema(&s.p)
	}
}

// Fill makes the output columns dst[i] of chunk (a table function's
// output, indexed by table function column as duckdb-go's GetVector is)
// reference column i of rec, whose schema is s's; rec has at most
// MaxRows rows. DuckDB holds rec's buffers until it drops the vectors.
// The caller sets the chunk's size.
func Fill(conn Conn, s *Schema, rec arrow.RecordBatch, chunk *duckdb.DataChunk, dst []int) error {
	if int(rec.NumCols()) != s.cols || len(dst) != s.cols {
		return fmt.Errorf("duckarrow: %d columns for a schema of %d", len(dst), s.cols)
	}
	if int(rec.NumRows()) > MaxRows() {
		return fmt.Errorf("duckarrow: %d rows in one chunk", rec.NumRows())
	}
	raw, proj := chunkHandle(chunk)
	if raw == nil {
		return errors.New("duckarrow: the output chunk has no handle")
	}
	if len(dst) == 0 {
		return nil
	}
	cols := make([]C.idx_t, len(dst))
	for i, c := range dst {
		if proj != nil {
			if c < 0 || c >= len(proj) || proj[c] < 0 {
				return fmt.Errorf("duckarrow: column %d is not projected", c)
			}
			c = proj[c]
		}
		cols[i] = C.idx_t(c)
	}
	ca := (*cdata.CArrowArray)(C.calloc(1, C.size_t(unsafe.Sizeof(cdata.CArrowArray{}))))
	defer C.free(unsafe.Pointer(ca))
	cdata.ExportArrowRecordBatch(rec, ca, nil)
	// DuckDB takes the array over (it clears release); on failure it may
	// not have, and the export is released here.
	defer cdata.ReleaseCArrowArray(ca)
	msg := C.lakesoul_fill(C.duckdb_connection(conn.p), s.p, (*C.struct_ArrowArray)(unsafe.Pointer(ca)),
		C.duckdb_data_chunk(raw), &cols[0], C.idx_t(len(dst)))
	if msg != nil {
		defer C.free(unsafe.Pointer(msg))
		return fmt.Errorf("duckarrow: %s", C.GoString(msg))
	}
	return nil
}

// FillNull marks the first n rows of output column col of chunk (indexed
// as Fill's dst) NULL, in one call: for a column of a flat type (no
// children) that the query does not read. The caller sets the chunk's
// size.
func FillNull(chunk *duckdb.DataChunk, col, n int) error {
	if n > MaxRows() {
		return fmt.Errorf("duckarrow: %d rows in one chunk", n)
	}
	raw, proj := chunkHandle(chunk)
	if raw == nil {
		return errors.New("duckarrow: the output chunk has no handle")
	}
	if proj != nil {
		if col < 0 || col >= len(proj) || proj[col] < 0 {
			return fmt.Errorf("duckarrow: column %d is not projected", col)
		}
		col = proj[col]
	}
	C.lakesoul_fill_null(C.duckdb_data_chunk(raw), C.idx_t(col), C.idx_t(n))
	return nil
}
