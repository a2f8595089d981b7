package duckarrow

import (
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/duckdb/duckdb-go/v2/mapping"
)

// duckdb-go keeps the C handles this package needs in unexported fields:
// duckdb.Conn.conn (the connection) and duckdb.DataChunk.chunk (the
// chunk) with DataChunk.projection (table function column → chunk
// column). Their offsets are looked up once by reflection, which also
// checks their names and types; any difference (another duckdb-go
// version) disables the package instead of reading memory wrongly.
type fieldLayout struct {
	connOff, chunkOff, projOff uintptr
	err                        error
}

var (
	layoutOnce sync.Once
	layoutOf   fieldLayout
)

func layout() *fieldLayout {
	layoutOnce.Do(func() {
		l := &layoutOf
		find := func(t reflect.Type, name string, want reflect.Type) uintptr {
			f, ok := t.FieldByName(name)
			if l.err == nil && (!ok || f.Type != want || len(f.Index) != 1) {
				l.err = fmt.Errorf("duckarrow: %s.%s is not a %s in this duckdb-go", t, name, want)
			}
			return f.Offset
		}
		l.connOff = find(reflect.TypeFor[duckdb.Conn](), "conn", reflect.TypeFor[mapping.Connection]())
		l.chunkOff = find(reflect.TypeFor[duckdb.DataChunk](), "chunk", reflect.TypeFor[mapping.DataChunk]())
		l.projOff = find(reflect.TypeFor[duckdb.DataChunk](), "projection", reflect.TypeFor[[]int]())
	})
	return &layoutOf
}

// Available reports why the bulk path cannot be used (nil: it can).
func Available() error { return layout().err }

// connHandle is the C connection of c (Available must be nil).
func connHandle(c *duckdb.Conn) unsafe.Pointer {
	return (*mapping.Connection)(unsafe.Add(unsafe.Pointer(c), layout().connOff)).Ptr
}

// chunkHandle is the C chunk of c and its projection (nil: every column,
// in order); nil when the layout is unknown.
func chunkHandle(c *duckdb.DataChunk) (unsafe.Pointer, []int) {
	l := layout()
	if l.err != nil {
		return nil, nil
	}
	raw := (*mapping.DataChunk)(unsafe.Add(unsafe.Pointer(c), l.chunkOff)).Ptr
	proj := *(*[]int)(unsafe.Add(unsafe.Pointer(c), l.projOff))
	return raw, proj
}
