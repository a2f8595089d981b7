// Package compaction rewrites the delta files of primary-key (and append)
// tables into compacted files, as LakeSoul's compaction service does
// (reference §6), and runs the table lifecycle (TTL expiry, discarded-file
// and orphan collection).
//
// A compaction of one range partition reads the partition's latest version R
// (its live files), merges every bucket with the table's merge operators
// (reader.Scan), writes the merged rows as new files and commits a
// CompactionCommit with read version R through lakesoul.compaction_commit,
// which calls lakesoul.commit: commits that landed after R are kept after the
// compacted files (they still win on read); if an update or another
// compaction landed after R, the compaction is dropped and its files deleted.
//
// Invariants:
//   - output files are never read by anyone before the commit that lists
//     them; a failed or dropped attempt deletes them (best effort), and the
//     prefixes an attempt writes into are recorded in its job row before it
//     writes, so the next claimer deletes what a dead attempt left; anything
//     else left behind is an orphan collected after a grace period;
//   - every output file holds each primary key at most once, sorted (the
//     merge emits one row per key and the writer sorts per bucket), so
//     readers may treat compacted files as merged;
//   - a compaction commits, records its discarded inputs in
//     discard_compressed_file_info and finishes its job in one catalog
//     transaction, and only while its claim token still holds the job;
//   - full compaction of a CDC table drops rows whose merged op is delete and
//     turns update into insert (§4.4); leveled compaction keeps ops as they
//     are, since older levels may still hold what a delete shadows.
package compaction

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"

	"github.com/lakesoul-go/lakesoul/catalog"
)

// Table properties the compaction service reads (values are strings, as all
// LakeSoul properties).
const (
	// PropMode selects the compaction engine: "full" (LakeSoul's classic
	// compaction, the default) or "leveled" (size-tiered levels, §6.3).
	PropMode = "compaction.mode"
	// PropAuto = "false" keeps the service's workers off the table; CALL
	// lakesoul.compact still compacts it.
	PropAuto = "compaction.auto"
	// PropPartitionTTL (days): a partition whose last commit is older expires
	// with its files (§6.6).
	PropPartitionTTL = "partition.ttl"
	// PropCompactionTTL (days): history before the newest compaction older
	// than this is removed with the files only it read (§6.6).
	PropCompactionTTL = "compaction.ttl"
)

// Compaction modes (PropMode values).
const (
	ModeFull    = "full"
	ModeLeveled = "leveled"
)

// Options tune a compaction. The zero value is usable.
type Options struct {
	// TargetFileRows bounds the rows of one output file (default 512 Ki rows);
	// a bucket with more rows gets several files with disjoint keys.
	TargetFileRows int
	// WorkerID names the claimer in the job table (default host-pid-random).
	WorkerID string
	// Lease is how long a claim holds without renewal (default 60 s); the
	// holder renews it every Lease/3.
	Lease time.Duration
	// Warehouse, when set, is the root every table compacted or collected
	// must have its directory in (layout.TableDir); unset, a table's path
	// must still end in its escaped namespace and name (confine.go).
	Warehouse string
	Logger    *slog.Logger
	Mem       memory.Allocator

	// beforeCommit, when set (tests), runs after the outputs are written and
	// before the commit, with the partition and its read version.
	beforeCommit func(ctx context.Context, desc string, readVersion int)
}

func (o Options) withDefaults() Options {
	if o.TargetFileRows <= 0 {
		o.TargetFileRows = 1 << 19
	}
	if o.WorkerID == "" {
		o.WorkerID = defaultWorkerID()
	}
	if o.Lease <= 0 {
		o.Lease = 60 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Mem == nil {
		o.Mem = memory.DefaultAllocator
	}
	return o
}

func defaultWorkerID() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), uuid.NewString()[:8])
}

// Status says what a compaction of one partition did.
type Status string

const (
	// Compacted: a CompactionCommit landed.
	Compacted Status = "compacted"
	// Skipped: nothing to do (no files, already compacted, or leveled mode
	// found no level over its limits).
	Skipped Status = "skipped"
	// Dropped: an update or another compaction landed after the read; the
	// result was discarded as LakeSoul's commit rules require (§2.4).
	Dropped Status = "dropped"
)

// Result describes the compaction of one partition.
type Result struct {
	Partition string
	Status    Status
	// ReadVersion is the version compacted (-1 when the partition had none).
	ReadVersion int
	// Version is the version the commit created (-1 unless Compacted).
	Version int
	// FilesIn/BytesIn are the live files read; FilesOut/BytesOut the files
	// of the new version's compacted commit (in leveled mode this includes
	// files carried over unchanged); Written/BytesWritten what was written.
	FilesIn, FilesOut int
	BytesIn, BytesOut int64
	Written           int
	BytesWritten      int64
	Discarded         int
	Rows              int64
	Mode              string
	Elapsed           time.Duration
}

// modeOf is the table's compaction mode.
func modeOf(t *catalog.Table) string {
	if strings.EqualFold(strings.TrimSpace(t.Properties[PropMode]), ModeLeveled) {
		return ModeLeveled
	}
	return ModeFull
}

// autoEnabled reports whether the service's workers may compact t.
func autoEnabled(t *catalog.Table) bool {
	v, ok := t.Properties[PropAuto]
	if !ok {
		return true
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	return err != nil || b
}

// days parses a TTL property (days, fractions allowed); ok is false when
// absent, unparsable or negative (LakeSoul uses -1 for "cancelled").
func days(t *catalog.Table, prop string) (float64, bool) {
	v, has := t.Properties[prop]
	if !has {
		return 0, false
	}
	d, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}
