package compaction

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
)

// The table lifecycle (LakeSoul §6.5, §6.6): partition.ttl expires whole
// partitions, compaction.ttl removes history before a compaction, discarded
// files go once nothing reads them, and files no commit knows (failed
// writes) go after a grace period. Catalog rows change first, in their own
// transaction; files are deleted after it committed, so the catalog never
// points at a missing file (a crash in between leaves orphans, which a later
// run collects). Orphans are files nobody knows and no open writer's write
// intent names (collectOrphans).

const lifecycleTask = "lifecycle"

// LifecycleOptions tune the lifecycle task.
type LifecycleOptions struct {
	// DiscardRetention: discarded files recorded longer ago than this are
	// deleted once no remaining version reads them (default 1 h).
	DiscardRetention time.Duration
	// OrphanGrace: a data file no commit mentions is deleted once it is
	// older than this (default 24 h; negative: never). Files of LakeSoul-Go
	// writers are protected by their write intents however long the writer
	// stays open; the grace must exceed the longest time between another
	// writer (LakeSoul's own clients) creating a file and committing it.
	OrphanGrace time.Duration
	// Now replaces the clock (tests).
	Now func() time.Time
}

func (o LifecycleOptions) withDefaults() LifecycleOptions {
	if o.DiscardRetention == 0 {
		o.DiscardRetention = time.Hour
	}
	if o.OrphanGrace == 0 {
		o.OrphanGrace = 24 * time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// LifecycleReport counts what a lifecycle run removed.
type LifecycleReport struct {
	ExpiredPartitions int
	ExpiredFiles      int
	RedundantFiles    int
	DiscardedFiles    int
	Orphans           int
}

// Deleted is the number of files the run deleted.
func (r LifecycleReport) Deleted() int {
	return r.ExpiredFiles + r.RedundantFiles + r.DiscardedFiles + r.Orphans
}

// RunLifecycle runs the lifecycle task once over every table of the catalog.
func RunLifecycle(ctx context.Context, cat *catalog.Catalog, store objstore.Store, opt LifecycleOptions) (LifecycleReport, error) {
	return runLifecycle(ctx, newCompactor(cat, store, Options{}), opt)
}

func runLifecycle(ctx context.Context, c *compactor, opt LifecycleOptions) (LifecycleReport, error) {
	opt = opt.withDefaults()
	var rep LifecycleReport
	tables, err := c.cat.Tables(ctx, "")
	if err != nil {
		return rep, err
	}
	var errs []error
	for _, t := range tables {
		if err := c.ownDir(t, tables); err != nil {
			c.opt.Logger.Warn("lifecycle: skipping a table not in a directory of its own", "table", t.QualifiedName(), "err", err)
			continue
		}
		errs = append(errs, c.expireTTLs(ctx, t, &rep)...)
	}
	if err := c.collectDiscarded(ctx, opt, nil, tables, &rep); err != nil {
		errs = append(errs, err)
	}
	if opt.OrphanGrace > 0 {
		// Expired write intents go first, in their own transaction: the
		// files of their writers (dead, or stalled past the TTL, whose
		// commits will now fail) become ordinary orphans.
		if err := c.cat.As("").ExpireWriteIntents(ctx); err != nil {
			errs = append(errs, fmt.Errorf("expire write intents: %w", err))
		}
		for _, t := range tables {
			n, err := c.collectOrphans(ctx, t, tables, opt.Now().Add(-opt.OrphanGrace))
			rep.Orphans += n
			if err != nil && !errors.Is(err, errNoListing) {
				errs = append(errs, fmt.Errorf("orphans of %s: %w", t.QualifiedName(), err))
			}
		}
	}
	return rep, errors.Join(errs...)
}

// partitionsOf lists the table's partition descs.
func (c *compactor) partitionsOf(ctx context.Context, tableID string) ([]string, error) {
	return c.cat.As("").PartitionDescs(ctx, tableID)
}

func (c *compactor) deadline(ctx context.Context, days float64) (int64, error) {
	return c.cat.As("").TTLDeadline(ctx, days)
}

func (c *compactor) expirePartitions(ctx context.Context, t *catalog.Table, days float64, rep *LifecycleReport) error {
	deadline, err := c.deadline(ctx, days)
	if err != nil {
		return err
	}
	descs, err := c.partitionsOf(ctx, t.ID)
	if err != nil {
		return err
	}
	for _, d := range descs {
		paths, err := c.cat.As("").ExpirePartition(ctx, t.ID, d, deadline)
		if err != nil {
			return err
		}
		if len(paths) > 0 {
			rep.ExpiredPartitions++
		}
		rep.ExpiredFiles += c.deleteWithin(ctx, t.Path, paths)
	}
	return nil
}

func (c *compactor) expireRedundant(ctx context.Context, t *catalog.Table, days float64, rep *LifecycleReport) error {
	deadline, err := c.deadline(ctx, days)
	if err != nil {
		return err
	}
	descs, err := c.partitionsOf(ctx, t.ID)
	if err != nil {
		return err
	}
	for _, d := range descs {
		paths, err := c.cat.As("").ExpireRedundant(ctx, t.ID, d, deadline)
		if err != nil {
			return err
		}
		rep.RedundantFiles += c.deleteWithin(ctx, t.Path, paths)
	}
	return nil
}

// collectOrphans deletes data files (and runs) under t's path that were last modified
// before olderThan and that the catalog does not know: no commit row of t
// mentions them, they are not awaiting discard collection, no claimed
// compaction attempt writes there, no registered write intent names them
// (an open writer's: sqlfuncs/090_write_intents.sql), and they are not under
// another table's path.
//
// The files are listed first and the catalog read after, in one snapshot: a
// listed file's intent was registered before the file was created, so the
// snapshot shows either the intent or the commit that consumed it (which
// makes the file known) — or neither because the writer gave the file up
// or its intent expired, and then its commit fails.
func (c *compactor) collectOrphans(ctx context.Context, t *catalog.Table, tables []*catalog.Table, olderThan time.Time) (int, error) {
	if err := c.ownDir(t, tables); err != nil {
		return 0, nil // logged by runLifecycle
	}
	objs, err := listObjects(ctx, c.store, t.Path)
	if err != nil {
		return 0, err
	}
	var candidates []objectInfo
	for _, o := range objs {
		if o.ModTime.Before(olderThan) && isDataFile(o.Path) {
			candidates = append(candidates, o)
		}
	}
	if len(candidates) == 0 {
		return 0, nil
	}
	known, err := c.knownFiles(ctx, t)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range candidates {
		if known.has(o.Path) || underOtherTable(o.Path, t, tables) || !layout.Within(t.Path, o.Path) {
			continue
		}
		if err := c.store.Delete(context.WithoutCancel(ctx), o.Path); err != nil {
			c.opt.Logger.Warn("lifecycle: could not delete an orphan", "path", o.Path, "err", err)
			continue
		}
		n++
	}
	return n, nil
}

// normalizePath maps the spellings of one object's URI (file:/x, file:///x,
// s3a://b/k …) to one key, so a file a commit lists in another spelling than
// the listing's is never taken for an orphan.
func normalizePath(p string) string {
	if strings.HasPrefix(p, "file:") {
		if lp, err := objstore.LocalPath("file:///" + strings.TrimLeft(strings.TrimPrefix(p, "file:"), "/")); err == nil {
			return "file:" + lp
		}
		if lp, err := objstore.LocalPath(p); err == nil {
			return "file:" + lp
		}
	}
	if objstore.IsS3URI(p) {
		if b, k, err := objstore.ParseS3URI(p); err == nil {
			return "s3:" + b + "/" + strings.TrimLeft(k, "/")
		}
	}
	return p
}

// intentOf is the write intent id p's name carries, or "".
func intentOf(p string) string {
	id, _ := layout.IntentOfFile(p)
	return id
}

// isDataFile tells whether p is a file orphan collection may delete: a data
// file, or an ingest's sorted run (layout.RunFileExt) a crash left behind —
// a run is never committed, so once its intent is gone it is an orphan.
func isDataFile(p string) bool {
	return strings.HasSuffix(p, ".parquet") || strings.HasSuffix(p, ".vortex") || layout.IsRunFile(p)
}

func underAny(p string, prefixes []string) bool {
	for _, pre := range prefixes {
		if strings.HasPrefix(p, strings.TrimSuffix(pre, "/")+"/") {
			return true
		}
	}
	return false
}

func underOtherTable(p string, t *catalog.Table, tables []*catalog.Table) bool {
	for _, o := range tables {
		if o.ID != t.ID && len(o.Path) > len(t.Path) && strings.HasPrefix(p, strings.TrimSuffix(o.Path, "/")+"/") {
			return true
		}
	}
	return false
}

// claimTask claims a periodic task if its interval has passed.
func (c *compactor) claimTask(ctx context.Context, task string, interval time.Duration) (bool, error) {
	return c.cat.As("").ClaimMaintenanceTask(ctx, task, c.opt.WorkerID, interval, max(c.opt.Lease, time.Hour))
}

func (c *compactor) taskDone(ctx context.Context, task string) {
	_ = c.cat.As("").MaintenanceTaskDone(context.WithoutCancel(ctx), task, c.opt.WorkerID)
}

// Vacuum runs the lifecycle task for one table now (SQL VACUUM): its
// partition.ttl and compaction.ttl, then the collection of its discarded
// files no version reads any more.
func Vacuum(ctx context.Context, cat *catalog.Catalog, store objstore.Store, t *catalog.Table, opt LifecycleOptions) (LifecycleReport, error) {
	c := newCompactor(cat, store, Options{})
	opt = opt.withDefaults()
	var rep LifecycleReport
	tables, err := c.cat.Tables(ctx, "")
	if err != nil {
		return rep, err
	}
	if err := c.ownDir(t, tables); err != nil {
		return rep, err
	}
	if errs := c.expireTTLs(ctx, t, &rep); len(errs) > 0 {
		return rep, errors.Join(errs...)
	}
	return rep, c.collectDiscarded(ctx, opt, []*catalog.Table{t}, tables, &rep)
}

// expireTTLs applies t's partition.ttl and compaction.ttl.
func (c *compactor) expireTTLs(ctx context.Context, t *catalog.Table, rep *LifecycleReport) []error {
	var errs []error
	if d, ok := days(t, PropPartitionTTL); ok {
		if err := c.expirePartitions(ctx, t, d, rep); err != nil {
			errs = append(errs, fmt.Errorf("partition.ttl of %s: %w", t.QualifiedName(), err))
		}
	}
	if d, ok := days(t, PropCompactionTTL); ok {
		if err := c.expireRedundant(ctx, t, d, rep); err != nil {
			errs = append(errs, fmt.Errorf("compaction.ttl of %s: %w", t.QualifiedName(), err))
		}
	}
	return errs
}

// collectDiscarded deletes the discarded files no version reads any more
// of the tables job is for (nil: every table). A discard row is anyone's
// to write — LakeSoul's own clients record their compactions' inputs, and a
// workspace user with a catalog login writes rows of the tables it sees —
// so a row proves nothing by itself: a file is deleted only when it lies
// inside the directory of the table the row names, that table owns its
// directory alone, and the table's known files (every commit of every
// partition, in any spelling of the path; its open writers' intents; its
// claimed compaction attempts) do not include it. Everything else is
// logged and left alone.
func (c *compactor) collectDiscarded(ctx context.Context, opt LifecycleOptions, job, tables []*catalog.Table, rep *LifecycleReport) error {
	var ids []string
	if job != nil {
		ids = make([]string, 0, len(job))
		for _, t := range job {
			ids = append(ids, t.ID)
		}
	}
	discarded, err := c.cat.As("").CollectDiscarded(ctx, opt.Now().Add(-opt.DiscardRetention).UnixMilli(), ids)
	if err != nil {
		return fmt.Errorf("discarded files: %w", err)
	}
	byTable := map[string][]string{}
	var order []string
	for _, d := range discarded {
		if byTable[d.TableID] == nil {
			order = append(order, d.TableID)
		}
		byTable[d.TableID] = append(byTable[d.TableID], d.Path)
	}
	var errs []error
	for _, id := range order {
		n, err := c.deleteDiscarded(ctx, tableByID(tables, id), tables, byTable[id])
		rep.DiscardedFiles += n
		if err != nil {
			errs = append(errs, fmt.Errorf("discarded files of %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// deleteDiscarded deletes the files of paths that collectDiscarded may
// delete for table t (nil: a table the job does not know) and returns how
// many it deleted.
func (c *compactor) deleteDiscarded(ctx context.Context, t *catalog.Table, tables []*catalog.Table, paths []string) (int, error) {
	if t == nil {
		c.opt.Logger.Warn("lifecycle: refusing to delete discarded files of a table this run is not for", "files", len(paths))
		return 0, nil
	}
	if err := c.ownDir(t, tables); err != nil {
		c.opt.Logger.Warn("lifecycle: refusing to delete discarded files of a table not in a directory of its own",
			"table", t.QualifiedName(), "err", err)
		return 0, nil
	}
	known, err := c.knownFiles(ctx, t)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range paths {
		switch {
		case !layout.Within(t.Path, p) || underOtherTable(p, t, tables):
			c.opt.Logger.Warn("lifecycle: refusing to delete a discarded file outside its table's directory",
				"table", t.QualifiedName(), "path", p)
		case known.has(p):
			c.opt.Logger.Warn("lifecycle: refusing to delete a discarded file its table still knows",
				"table", t.QualifiedName(), "path", p)
		default:
			if c.deleteOne(ctx, p) {
				n++
			}
		}
	}
	return n, nil
}

func tableByID(tables []*catalog.Table, id string) *catalog.Table {
	for _, t := range tables {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// knownSet is what the catalog knows of a table's files at one snapshot:
// paths its commits or discard rows name, the prefixes its claimed
// compaction attempts write into, and the files of its open writers (the
// ids of live write intents and the paths they claimed).
type knownSet struct {
	paths   map[string]bool // normalizePath'd
	busy    []string
	writing map[string]bool // live intent ids and normalizePath'd claimed paths
}

// has tells whether p is a file the catalog knows or an open writer may be
// writing: it must not be deleted as garbage.
func (k *knownSet) has(p string) bool {
	n := normalizePath(p)
	return k.paths[n] || underAny(p, k.busy) || k.writing[intentOf(p)] || k.writing[n]
}

// knownFiles reads t's knownSet in one snapshot.
func (c *compactor) knownFiles(ctx context.Context, t *catalog.Table) (*knownSet, error) {
	k := &knownSet{paths: map[string]bool{}, writing: map[string]bool{}}
	known, err := c.cat.As("").KnownFiles(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	for _, p := range known.Paths {
		k.paths[normalizePath(p)] = true
	}
	k.busy = known.JobOutputs
	for id, paths := range known.Intents {
		k.writing[id] = true
		for _, p := range paths {
			k.writing[normalizePath(p)] = true
		}
	}
	return k, nil
}
