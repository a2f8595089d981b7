package vector

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/schema"
)

// Segments: the index of a table is built per partition × bucket (a reader
// unit). A segment holds the merged rows of the unit's data files as they
// were when it was built, and is recorded in the catalog with those files'
// paths (lakesoul.vector_index_segment). A search uses a segment for a unit
// whose live files still include all of them (later upserts are newer
// files, searched exactly); a unit whose files were rewritten (compaction,
// copy-on-write deletes) is searched exactly until its segment is rebuilt.

// KeyLiteral is the SQL literal of a single-column primary key value at row
// i of a (bigint, integer, smallint or text); false for other types.
func KeyLiteral(a arrow.Array, i int) (string, bool) {
	switch x := a.(type) {
	case *array.Int64:
		return strconv.FormatInt(x.Value(i), 10), true
	case *array.Int32:
		return strconv.FormatInt(int64(x.Value(i)), 10), true
	case *array.Int16:
		return strconv.FormatInt(int64(x.Value(i)), 10), true
	case *array.String:
		return "'" + strings.ReplaceAll(x.Value(i), "'", "''") + "'", true
	}
	return "", false
}

// IndexableKey reports whether a table's primary key can key a vector index
// (one column of an integer or text type).
func IndexableKey(t *catalog.Table) bool {
	if len(t.PKCols) != 1 {
		return false
	}
	switch t.Schema.Field(t.Schema.FieldIndices(t.PKCols[0])[0]).Type.ID() {
	case arrow.INT64, arrow.INT32, arrow.INT16, arrow.STRING:
		return true
	}
	return false
}

// Rows are keys and vectors read from a unit.
type Rows struct {
	Keys []string
	Vecs []float32
}

// ReadRows reads the key and vector column of the merged rows of unit u of
// scan (rows whose vector is NULL are left out).
func ReadRows(ctx context.Context, scan *reader.Scan, u reader.Unit, column string) (*Rows, error) {
	out := &Rows{}
	err := EachRow(ctx, scan, u, column, func(key string, v []float32, deleted bool) {
		if v != nil && !deleted {
			out.Keys = append(out.Keys, key)
			out.Vecs = append(out.Vecs, v...)
		}
	})
	return out, err
}

// EachRow calls fn with the key and vector of each merged row of unit u of
// scan: v is nil when the row's vector is NULL (or its files lack the
// column), and deleted is set for a CDC delete (which only a scan with
// KeepCDCDeletes yields). v is valid during the call only.
func EachRow(ctx context.Context, scan *reader.Scan, u reader.Unit, column string, fn func(key string, v []float32, deleted bool)) error {
	t := scan.Table
	kc, vc := t.Schema.FieldIndices(t.PKCols[0])[0], t.Schema.FieldIndices(column)[0]
	cdc := -1
	if c := t.Properties[reader.CDCColumnProperty]; c != "" {
		if idx := t.Schema.FieldIndices(c); len(idx) > 0 {
			cdc = idx[0]
		}
	}
	it, err := scan.Open(ctx, u)
	if err != nil {
		return err
	}
	defer it.Close()
	for {
		b, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		keys, vecs := b.Column(kc), b.Column(vc).(*array.FixedSizeList)
		dims := int(vecs.DataType().(*arrow.FixedSizeListType).Len())
		vals := vecs.ListValues().(*array.Float32).Float32Values()
		var ops *array.String
		if cdc >= 0 {
			ops, _ = b.Column(cdc).(*array.String)
		}
		for i := range int(b.NumRows()) {
			k, ok := KeyLiteral(keys, i)
			if !ok {
				b.Release()
				return fmt.Errorf("vector index: key column %s of type %s", t.PKCols[0], keys.DataType())
			}
			deleted := ops != nil && ops.IsValid(i) && ops.Value(i) == "delete"
			if vecs.IsNull(i) {
				fn(k, nil, deleted)
				continue
			}
			start := (vecs.Offset() + i) * dims
			fn(k, vals[start:start+dims], deleted)
		}
		b.Release()
	}
}

// NeededColumns marks the key and vector columns of t (and its CDC op
// column, if any).
func NeededColumns(t *catalog.Table, column string) []bool {
	need := make([]bool, t.Schema.NumFields())
	need[t.Schema.FieldIndices(column)[0]] = true
	for _, k := range t.PKCols {
		need[t.Schema.FieldIndices(k)[0]] = true
	}
	if c := t.Properties[reader.CDCColumnProperty]; c != "" {
		if idx := t.Schema.FieldIndices(c); len(idx) > 0 {
			need[idx[0]] = true
		}
	}
	return need
}

// Builder builds and rebuilds segments. Its builds take turns for its
// slots, a segment at a time (BuildSlots); each is listed while it runs
// (Running, shown in pg_stat_activity) and stops when it is cancelled
// (Cancel: pg_cancel_backend), when its index or table no longer exists
// (checked every second, whoever dropped it), or when its context ends
// (shutdown).
type Builder struct {
	Cat   *catalog.Catalog
	Store objstore.Store
	Log   *slog.Logger
	// Slots bounds the segment builds running at once (nil: one).
	Slots *BuildSlots

	once    sync.Once
	mu      sync.Mutex
	running map[uint32]*build
}

// BuildInfo describes a running build.
type BuildInfo struct {
	// PID identifies the build as pg_stat_activity's pid does a session.
	PID uint32
	// User is the role the build runs for ("" for the server's own work,
	// as after a compaction).
	User         string
	Table, Index string
	Started      time.Time
	// Waiting is set while the build waits for a slot.
	Waiting bool
}

type build struct {
	info   BuildInfo
	cancel context.CancelCauseFunc
}

// ErrBuildCanceled ends a build that Cancel stopped.
var ErrBuildCanceled = errors.New("vector index build canceled")

// errIndexGone ends a build whose index or table was dropped.
var errIndexGone = errors.New("vector index dropped")

// indexCheckInterval is how often a running build checks that its index
// still exists.
const indexCheckInterval = time.Second

// segmentExt ends the names of segment files of the current format
// (format.go); a segment of an older format is rebuilt by the next build
// of its unit, and searched exactly until then.
const segmentExt = ".ivf2"

// segmentLists is the list count of a segment of n rows: the index's lists,
// fewer for small segments (at least 16 rows per list on average).
func segmentLists(lists, n int) int { return max(1, min(lists, n/16)) }

func (b *Builder) init() {
	b.once.Do(func() {
		if b.Slots == nil {
			b.Slots = NewBuildSlots(1)
		}
		b.running = map[uint32]*build{}
	})
}

// Running lists the builds in progress.
func (b *Builder) Running() []BuildInfo {
	b.init()
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]BuildInfo, 0, len(b.running))
	for _, r := range b.running {
		out = append(out, r.info)
	}
	return out
}

// Cancel stops the build pid; false when there is none.
func (b *Builder) Cancel(pid uint32) bool {
	b.init()
	b.mu.Lock()
	r := b.running[pid]
	b.mu.Unlock()
	if r != nil {
		r.cancel(ErrBuildCanceled)
	}
	return r != nil
}

// start registers a build under a fresh pid.
func (b *Builder) start(info BuildInfo, cancel context.CancelCauseFunc) *build {
	b.init()
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		var p [4]byte
		_, _ = rand.Read(p[:])
		info.PID = binary.BigEndian.Uint32(p[:]) & 0x7fffffff
		if _, taken := b.running[info.PID]; info.PID != 0 && !taken {
			break
		}
	}
	r := &build{info: info, cancel: cancel}
	b.running[info.PID] = r
	return r
}

func (b *Builder) setWaiting(r *build, waiting bool) {
	b.mu.Lock()
	r.info.Waiting = waiting
	b.mu.Unlock()
}

func (b *Builder) end(r *build) {
	b.mu.Lock()
	delete(b.running, r.info.PID)
	b.mu.Unlock()
}

// watch cancels the build when ix no longer exists, until ctx ends.
func (b *Builder) watch(ctx context.Context, ix catalog.VectorIndex, cancel context.CancelCauseFunc) {
	tick := time.NewTicker(indexCheckInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		ixs, err := b.Cat.VectorIndexes(ctx, ix.TableID)
		if err != nil {
			continue // the catalog is asked again at the next tick
		}
		if !slices.Contains(ixs, ix) {
			cancel(errIndexGone)
			return
		}
	}
}

// BuildTable builds the segments of every unit of t whose segment is
// missing or stale (its files are no longer exactly the unit's live files),
// for user. It returns the number of segments built; a build stopped by
// Cancel fails with ErrBuildCanceled, one whose index was dropped with
// context.Canceled.
func (b *Builder) BuildTable(ctx context.Context, t *catalog.Table, ix catalog.VectorIndex, descs []string, user string) (int, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r := b.start(BuildInfo{User: user, Table: t.QualifiedName(), Index: ix.Name, Started: time.Now()}, cancel)
	defer b.end(r)
	safego.Go(func() {
		defer safego.RecoverTo(cancel) // a watcher that panicked stops the build with it
		b.watch(ctx, ix, cancel)
	})
	n, err := b.buildTable(ctx, r, t, ix, descs)
	if err != nil && ctx.Err() != nil {
		if cause := context.Cause(ctx); errors.Is(cause, ErrBuildCanceled) || errors.As(cause, new(*safego.PanicError)) {
			err = cause
		}
	}
	return n, err
}

func (b *Builder) buildTable(ctx context.Context, r *build, t *catalog.Table, ix catalog.VectorIndex, descs []string) (int, error) {
	metric, err := ParseMetric(ix.Metric)
	if err != nil {
		return 0, err
	}
	field := t.Schema.FieldIndices(ix.Column)
	if len(field) == 0 {
		return 0, fmt.Errorf("vector index %s: no column %s", ix.Name, ix.Column)
	}
	if dims := schema.VectorDims(t.Schema.Field(field[0])); dims > MaxIndexDims {
		return 0, fmt.Errorf("vector index %s: column %s has %d dimensions, at most %d can be indexed", ix.Name, ix.Column, dims, MaxIndexDims)
	}
	parts, err := b.Cat.LiveFiles(ctx, t.ID, descs)
	if err != nil {
		return 0, err
	}
	segs, err := b.Cat.VectorSegments(ctx, t.ID, ix.Name)
	if err != nil {
		return 0, err
	}
	have := map[string]catalog.VectorSegment{}
	for _, s := range segs {
		have[s.Desc+"\x00"+strconv.Itoa(s.Bucket)] = s
	}
	scan := &reader.Scan{Store: b.Store, Table: t, Partitions: parts, Unordered: true, Needed: NeededColumns(t, ix.Column)}
	units, err := scan.Units()
	if err != nil {
		return 0, err
	}
	built := 0
	for _, u := range units {
		paths := FilePaths(u.Files)
		if s, ok := have[u.Desc+"\x00"+strconv.Itoa(u.Bucket)]; ok && slices.Equal(s.DataFiles, paths) && strings.HasSuffix(s.Path, segmentExt) {
			continue
		}
		b.setWaiting(r, true)
		release, err := b.Slots.Acquire(ctx, t.Domain)
		b.setWaiting(r, false)
		if err != nil {
			return built, err
		}
		err = b.buildSegment(ctx, scan, t, ix, metric, u, paths)
		release()
		if err != nil {
			return built, err
		}
		built++
	}
	return built, nil
}

// buildSegment reads unit u's rows and writes its segment.
func (b *Builder) buildSegment(ctx context.Context, scan *reader.Scan, t *catalog.Table, ix catalog.VectorIndex, metric Metric, u reader.Unit, paths []string) error {
	rows, err := ReadRows(ctx, scan, u, ix.Column)
	if err != nil {
		return err
	}
	return b.writeSegment(ctx, t, ix, metric, u, paths, rows)
}

// Rebuild rebuilds the stale segments of partition desc of every vector
// index of table tableID (after compaction rewrote its files).
func (b *Builder) Rebuild(ctx context.Context, tableID, desc string) error {
	ixs, err := b.Cat.VectorIndexes(ctx, tableID)
	if err != nil || len(ixs) == 0 {
		return err
	}
	t, err := b.Cat.TableByID(ctx, tableID)
	if err != nil {
		return err
	}
	for _, ix := range ixs {
		if _, err := b.BuildTable(ctx, t, ix, []string{desc}, ""); err != nil {
			return fmt.Errorf("rebuild vector index %s: %w", ix.Name, err)
		}
	}
	return nil
}

// FilePaths are the paths of files.
func FilePaths(files []catalog.DataFile) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	return out
}

func (b *Builder) writeSegment(ctx context.Context, t *catalog.Table, ix catalog.VectorIndex, metric Metric, u reader.Unit, paths []string, rows *Rows) error {
	dims := schema.VectorDims(t.Schema.Field(t.Schema.FieldIndices(ix.Column)[0]))
	idx, err := Build(ctx, rows.Keys, rows.Vecs, dims, metric, BuildOptions{Lists: segmentLists(ix.Lists, len(rows.Keys)), Seed: 1})
	if err != nil {
		return err
	}
	dir, err := layout.PartitionPath(t.Path, u.Desc)
	if err != nil {
		return err
	}
	name, err := layout.EscapeSegment(ix.Name)
	if err != nil {
		return err
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	path := fmt.Sprintf("%s/_vector/%s_%04d_%s%s", dir, name, u.Bucket, hex.EncodeToString(rnd[:]), segmentExt)
	w, err := b.Store.Create(ctx, path)
	if err != nil {
		return err
	}
	if _, err := idx.WriteTo(w); err != nil {
		_ = w.Abort()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	old, ok, err := b.Cat.PutVectorSegment(ctx, t.ID, ix.Name, catalog.VectorSegment{Desc: u.Desc, Bucket: u.Bucket,
		Path: path, DataFiles: paths, Rows: int64(len(rows.Keys))})
	if err != nil || !ok {
		b.deleteFile(context.WithoutCancel(ctx), path)
		return err
	}
	if old != "" && layout.Within(t.Path, old) {
		// Searches that loaded it keep it in memory; new ones use path.
		b.deleteFile(ctx, old)
	}
	return nil
}

// deleteFile deletes a segment file no catalog row names; a failure leaves
// an orphan, which is logged (the build itself is not failed by it).
func (b *Builder) deleteFile(ctx context.Context, path string) {
	if err := b.Store.Delete(ctx, path); err != nil && b.Log != nil {
		b.Log.Warn("vector index: cannot delete segment file", "path", path, "err", err)
	}
}

// Segment is a loaded segment file: its index, reading full vectors from
// the open file.
type Segment struct {
	*IVF
	file objstore.Reader
}

// Close closes the segment's file.
func (s *Segment) Close() error { return s.file.Close() }

// Load opens a segment file and decodes its in-memory part.
func Load(ctx context.Context, store objstore.Store, path string) (*Segment, error) {
	r, err := store.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	ix, err := Open(r, r.Size())
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Segment{IVF: ix, file: r}, nil
}
