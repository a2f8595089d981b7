package cdc

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// The initial copy of a large table is read in page ranges over several
// connections at once, each importing the slot's exported snapshot, so the
// publisher's COPY — one backend per connection, single-threaded — is not
// the copy's bottleneck. Every connection reads the same snapshot, and the
// ranges are disjoint and cover the table (the last is open-ended), so the
// copy holds exactly the snapshot's rows; their order does not matter: an
// initial copy replaces the lake table's rows, and a snapshot holds each key
// once.
const (
	// copyChunks is how many connections copy one table at most.
	copyChunks = 4
	// tidRangeScanVersion: PostgreSQL 14 scans a ctid range without reading
	// the rest of the table; before it, each chunk would read all of it.
	tidRangeScanVersion = 140000
)

// copyChunkMinPages: tables smaller than this many pages per chunk are
// copied on one connection (16 MiB of 8 KiB pages; tests lower it).
var copyChunkMinPages int64 = 2048

// copiedChunks counts the chunks of chunked copies (for tests).
var copiedChunks atomic.Int64

// snapshotConns are the publisher connections that read the copy's
// snapshot: the first is the copy's own; more are opened on demand for
// chunked copies.
type snapshotConns struct {
	conn     string
	snapshot string
	conns    []*pgx.Conn
	txs      []pgx.Tx
	version  int // server_version_num
}

// chunkConns returns n connections in the snapshot (the first n, opening
// those missing), or fewer when a connection cannot be opened: chunks are an
// optimisation, and the first connection alone copies correctly.
func (s *snapshotConns) chunkConns(ctx context.Context, n int) []*pgx.Conn {
	for len(s.conns) < n {
		c, err := connectPG(ctx, s.conn)
		if err != nil {
			break
		}
		tx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err == nil {
			_, err = tx.Exec(ctx, "SET TRANSACTION SNAPSHOT '"+strings.ReplaceAll(s.snapshot, "'", "''")+"'")
		}
		if err != nil {
			c.Close(context.WithoutCancel(ctx))
			break
		}
		s.conns = append(s.conns, c)
		s.txs = append(s.txs, tx)
	}
	return s.conns[:min(n, len(s.conns))]
}

// close ends the extra connections (the first is the caller's).
func (s *snapshotConns) close(ctx context.Context) {
	for i := 1; i < len(s.conns); i++ {
		_ = s.txs[i].Rollback(context.WithoutCancel(ctx))
		s.conns[i].Close(context.WithoutCancel(ctx))
	}
}

// pageRanges splits pages into at most n ctid conditions of about equal
// size, the last open-ended; one empty condition when the table is small.
func pageRanges(pages int64, n int) []string {
	if n < 2 || pages < int64(n)*copyChunkMinPages {
		return []string{""}
	}
	step := pages / int64(n)
	out := make([]string, 0, n)
	for i := int64(0); i < int64(n); i++ {
		lo, hi := i*step, (i+1)*step
		switch {
		case i == 0:
			out = append(out, fmt.Sprintf(" WHERE ctid < '(%d,0)'::tid", hi))
		case i == int64(n)-1:
			out = append(out, fmt.Sprintf(" WHERE ctid >= '(%d,0)'::tid", lo))
		default:
			out = append(out, fmt.Sprintf(" WHERE ctid >= '(%d,0)'::tid AND ctid < '(%d,0)'::tid", lo, hi))
		}
	}
	return out
}

// copyTableChunks copies one table into the batch, in page ranges over
// several snapshot connections when it is large.
func (a *applier) copyTableChunks(ctx context.Context, sc *snapshotConns, st sourceTable, ts *tableState) error {
	ranges := []string{""}
	if sc.version >= tidRangeScanVersion && sc.snapshot != "" {
		var pages int64
		if err := sc.conns[0].QueryRow(ctx, "SELECT pg_relation_size($1::oid) / current_setting('block_size')::bigint", st.OID).Scan(&pages); err != nil {
			return sourceError("size of "+st.key(), err)
		}
		ranges = pageRanges(pages, copyChunks)
	}
	conns := sc.chunkConns(ctx, len(ranges))
	if len(conns) < len(ranges) {
		ranges = []string{""} // could not open them all: one connection
		conns = conns[:1]
	}
	exprs := make([]string, len(ts.cols))
	for i, c := range ts.cols {
		exprs[i] = copyColumn(c)
	}
	// batch.add is not safe for concurrent use: rows are added under mu.
	// The first row that cannot be added (an incompatible value) stops
	// every chunk and is the copy's error, as is, so the table alone stops.
	var mu sync.Mutex
	var rowErr error
	// The first error of a chunk (a panic too) cancels the others and is
	// the copy's, as errgroup would have it.
	gctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if len(ranges) > 1 {
		copiedChunks.Add(int64(len(ranges)))
	}
	var g safego.Group
	for i, where := range ranges {
		nc := conns[i]
		g.Start(func() {
			err := safego.Call(func() error {
				w := &copyBinaryWriter{cols: ts.cols, row: func(vals []value) error {
					mu.Lock()
					defer mu.Unlock()
					if rowErr != nil {
						return rowErr
					}
					rowErr = a.batch.add(gctx, ts, opInsert, vals)
					return rowErr
				}}
				_, err := nc.PgConn().CopyTo(gctx, w, "COPY (SELECT "+strings.Join(exprs, ", ")+" FROM ONLY "+st.ident()+where+") TO STDOUT (FORMAT binary)")
				if err == nil {
					err = w.finish()
				}
				return err
			})
			if err != nil {
				cancel(err)
			}
		})
	}
	g.Wait()
	if rowErr != nil {
		return rowErr
	}
	var err error
	if gctx.Err() != nil {
		err = context.Cause(gctx)
	}
	return sourceError("copy "+st.key(), err)
}
