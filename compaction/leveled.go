package compaction

import (
	"context"
	"fmt"
	"io"
	"math"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/schema"
)

// Leveled (size-tiered) compaction, LakeSoul §6.3. Level 0 holds the delta
// files writers commit; level N ≥ 1 the files under <table_path>/compactdir<N>/.
// Per bucket, deeper levels hold older data and, within a level, files are in
// age order; the compacted file list is therefore the deepest level first,
// then shallower ones, then level-0 files left alone. A merge only ever
// joins consecutive files of one level (or all of level 0), so merging
// preserves what merge-on-read returns.
//
// Parameters are table properties with LakeSoul's names and code defaults.

// Leveled compaction table properties.
const (
	PropLevel0FileNumLimit     = "compaction.level0.file.number.limit"
	PropLevelFileNumLimit      = "compaction.level.file.number.limit"
	PropMaxBytesForLevelBase   = "compaction.max.bytes.for.level.base"
	PropLowLevelMultiplier     = "compaction.max.bytes.for.low.level.multiplier"
	PropLevelMultiplier        = "compaction.max.bytes.for.level.multiplier"
	PropLevelMergeNumLimit     = "compaction.level.file.merge.num.limit"
	PropLevelMergeSizeLimit    = "compaction.level.file.merge.size.limit"
	PropLevelMaxFileSize       = "compaction.level.max.file.size"
	PropPickNextLevelMinSize   = "compaction.pick.next.level.min.file.size"
	PropPickNextLevelSizeMult  = "compaction.pick.next.level.min.file.size.multiplier"
	PropMaxNumLevels           = "max.num.levels.limit"
	defaultMaxBytesLevelBase   = 1 << 30
	defaultLevelMergeSizeLimit = 600 << 20
	defaultLevelMaxFileSize    = 5 << 30
	defaultPickNextLevelMin    = 100 << 20
)

type levelConfig struct {
	l0Limit, levelLimit int
	levelBase           int64
	lowMult, mult       float64
	mergeNum            int
	mergeSize           int64
	maxFileSize         int64
	pickMin             int64
	pickMult            float64
	maxLevels           int
}

// levelConfigOf reads the leveled parameters from table properties; a
// missing or invalid value takes LakeSoul's code default. (LakeSoul's merge
// size limit falls back to 5 GB through a bug; we use its nominal 600 MB.)
func levelConfigOf(props map[string]string) levelConfig {
	intOf := func(k string, def int) int {
		if n, err := strconv.Atoi(strings.TrimSpace(props[k])); err == nil && n > 0 {
			return n
		}
		return def
	}
	sizeOf := func(k string, def int64) int64 {
		if v, ok := props[k]; ok {
			if n, err := objstore.ParseSize(v); err == nil && n > 0 {
				return n
			}
		}
		return def
	}
	floatOf := func(k string, def float64) float64 {
		if f, err := strconv.ParseFloat(strings.TrimSpace(props[k]), 64); err == nil && f > 0 {
			return f
		}
		return def
	}
	cfg := levelConfig{
		l0Limit:     intOf(PropLevel0FileNumLimit, 10),
		levelLimit:  intOf(PropLevelFileNumLimit, 10),
		levelBase:   sizeOf(PropMaxBytesForLevelBase, defaultMaxBytesLevelBase),
		lowMult:     floatOf(PropLowLevelMultiplier, 5),
		mult:        floatOf(PropLevelMultiplier, 10),
		mergeNum:    intOf(PropLevelMergeNumLimit, 5),
		mergeSize:   sizeOf(PropLevelMergeSizeLimit, defaultLevelMergeSizeLimit),
		maxFileSize: sizeOf(PropLevelMaxFileSize, defaultLevelMaxFileSize),
		pickMin:     sizeOf(PropPickNextLevelMinSize, defaultPickNextLevelMin),
		pickMult:    floatOf(PropPickNextLevelSizeMult, 5),
		maxLevels:   intOf(PropMaxNumLevels, 5),
	}
	cfg.mergeNum = max(cfg.mergeNum, 2)
	return cfg
}

// budget is the size that makes level lv (≥ 1) due: base, base×low
// multiplier, then ×multiplier per further level.
func (c levelConfig) budget(lv int) int64 {
	b := float64(c.levelBase)
	if lv >= 2 {
		b *= c.lowMult
	}
	if lv >= 3 {
		b *= math.Pow(c.mult, float64(lv-2))
	}
	return int64(min(b, math.MaxInt64/2))
}

// due reports whether a bucket whose files are in levels needs any work:
// level 0 over its file limit, a level over its file limit or size budget, or
// a file to promote.
func (c levelConfig) due(levels [][]catalog.DataFile) bool {
	if len(levels[0]) >= c.l0Limit {
		return true
	}
	for lv := 1; lv < len(levels); lv++ {
		fs := levels[lv]
		if len(fs) >= c.levelLimit || totalSize(fs) >= c.budget(lv) {
			return true
		}
		if lv < c.maxLevels && len(fs) > 0 && fs[0].Size >= c.promoteSize(lv) {
			return true
		}
	}
	return false
}

// promoteSize is the size from which a file at level lv moves to lv+1.
func (c levelConfig) promoteSize(lv int) int64 {
	return int64(min(float64(c.pickMin)*math.Pow(c.pickMult, float64(lv-1)), math.MaxInt64/2))
}

var levelDirRe = regexp.MustCompile(`/compactdir(\d+)/`)

// levelOf is a file's level: N for a path containing /compactdir<N>/, else 0.
func levelOf(p string) int {
	m := levelDirRe.FindStringSubmatch(p)
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// levelDir is the root compacted files of level lv are written under.
func levelDir(t *catalog.Table, lv int) string {
	return objstore.Join(t.Path, fmt.Sprintf("compactdir%d", lv))
}

// leveledRun is one leveled compaction of one partition.
type leveledRun struct {
	c    *compactor
	t    *catalog.Table
	desc string
	cfg  levelConfig
	// intent names every file the run writes (see compactPartition).
	intent *catalog.WriteIntent
	// written are the files this run created (deleted on failure).
	written []catalog.FileOp
}

// run plans and executes the leveled compaction of files (the partition's
// live files in snapshot order). It returns the new file list, the files it
// discarded (empty: nothing was due, nothing written) and what it wrote.
func (r *leveledRun) run(ctx context.Context, files []catalog.DataFile) (final []catalog.DataFile, discards []string, written []catalog.FileOp, err error) {
	defer func() {
		if err != nil {
			r.c.deleteFiles(ctx, opsPaths(r.written))
		}
	}()
	byBucket := map[int][]catalog.DataFile{}
	for _, f := range files {
		b, ok := layout.BucketOfFile(f.Path)
		if !ok || !r.t.HasPK() {
			b = 0
		}
		byBucket[b] = append(byBucket[b], f)
	}
	buckets := make([]int, 0, len(byBucket))
	for b := range byBucket {
		buckets = append(buckets, b)
	}
	sort.Ints(buckets)
	for _, b := range buckets {
		out, disc, err := r.bucket(ctx, byBucket[b])
		if err != nil {
			return nil, nil, nil, err
		}
		final = append(final, out...)
		discards = append(discards, disc...)
	}
	if len(discards) == 0 {
		return nil, nil, nil, nil
	}
	return final, discards, r.written, nil
}

// complete reports whether f has every (non-range) column of the table.
func (r *leveledRun) complete(f catalog.DataFile) bool {
	for _, fld := range r.t.Schema.Fields() {
		if slices.Contains(r.t.RangeCols, fld.Name) {
			continue
		}
		// A file written before a rename has the column by a former name.
		if !slices.ContainsFunc(append([]string{fld.Name}, schema.FormerNames(fld)...), func(n string) bool {
			return slices.Contains(f.ExistCols, n)
		}) {
			return false
		}
	}
	return true
}

// bucket compacts one bucket's files.
func (r *leveledRun) bucket(ctx context.Context, files []catalog.DataFile) (final []catalog.DataFile, discards []string, err error) {
	cfg := r.cfg
	levels := make([][]catalog.DataFile, cfg.maxLevels+1)
	for _, f := range files {
		lv := min(levelOf(f.Path), cfg.maxLevels)
		levels[lv] = append(levels[lv], f)
	}
	if !cfg.due(levels) {
		return files, nil, nil
	}
	// A file without every column (a partial upsert, or written before a
	// column was added) leaves the older value of the missing columns in
	// place; merging it without everything older would turn "absent" into
	// NULL. Such a bucket is merged whole into level 1.
	for _, f := range files {
		if !r.complete(f) {
			out, err := r.merge(ctx, files, 1)
			if err != nil {
				return nil, nil, err
			}
			for _, f := range files {
				discards = append(discards, f.Path)
			}
			return out, discards, nil
		}
	}

	// Level 0: merged (in batches of at most the max file size) into level 1
	// once it has enough files; otherwise left alone.
	if len(levels[0]) >= cfg.l0Limit {
		var batch []catalog.DataFile
		var size int64
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			out, err := r.merge(ctx, batch, 1)
			if err != nil {
				return err
			}
			levels[1] = append(levels[1], out...)
			for _, f := range batch {
				discards = append(discards, f.Path)
			}
			batch, size = nil, 0
			return nil
		}
		for _, f := range levels[0] {
			if len(batch) > 0 && size+f.Size > cfg.maxFileSize {
				if err := flush(); err != nil {
					return nil, nil, err
				}
			}
			batch = append(batch, f)
			size += f.Size
		}
		if err := flush(); err != nil {
			return nil, nil, err
		}
		levels[0] = nil
	}
	for lv := 1; lv <= cfg.maxLevels; lv++ {
		fs := levels[lv]
		if len(fs) >= cfg.levelLimit || totalSize(fs) >= cfg.budget(lv) {
			var next, group []catalog.DataFile
			flush := func() error {
				if len(group) < 2 {
					next = append(next, group...)
					group = nil
					return nil
				}
				out, err := r.merge(ctx, group, lv)
				if err != nil {
					return err
				}
				next = append(next, out...)
				for _, f := range group {
					discards = append(discards, f.Path)
				}
				group = nil
				return nil
			}
			for _, f := range fs {
				if f.Size >= cfg.maxFileSize {
					if err := flush(); err != nil {
						return nil, nil, err
					}
					next = append(next, f)
					continue
				}
				group = append(group, f)
				if len(group) >= cfg.mergeNum || totalSize(group) >= cfg.mergeSize {
					if err := flush(); err != nil {
						return nil, nil, err
					}
				}
			}
			if err := flush(); err != nil {
				return nil, nil, err
			}
			levels[lv] = next
		}
		// Promotion: the leading run of large files moves one level down
		// (they are the oldest of their level and newer than everything
		// below, so they go to the end of the next level).
		if lv < cfg.maxLevels {
			th := cfg.promoteSize(lv)
			i := 0
			for ; i < len(levels[lv]) && levels[lv][i].Size >= th; i++ {
				moved, err := r.move(ctx, levels[lv][i], lv+1)
				if err != nil {
					return nil, nil, err
				}
				levels[lv+1] = append(levels[lv+1], moved)
				discards = append(discards, levels[lv][i].Path)
			}
			levels[lv] = levels[lv][i:]
		}
	}
	for lv := cfg.maxLevels; lv >= 1; lv-- {
		final = append(final, levels[lv]...)
	}
	final = append(final, levels[0]...)
	return final, discards, nil
}

// merge merge-reads consecutive files of one bucket into level lv; CDC
// deletes are kept (older levels may hold what they shadow).
func (r *leveledRun) merge(ctx context.Context, files []catalog.DataFile, lv int) ([]catalog.DataFile, error) {
	ops, _, err := r.c.rewrite(ctx, r.intent, r.t, r.desc, files, levelDir(r.t, lv), r.t.HashBucketNum, false)
	if err != nil {
		return nil, err
	}
	r.written = append(r.written, ops...)
	return opsToFiles(ops), nil
}

// move copies a file into level lv under the same file name (object stores
// have no rename; LakeSoul keeps the name); the original becomes a discarded
// file. The copy's path is claimed by the run's write intent first, since
// its name does not carry the intent.
func (r *leveledRun) move(ctx context.Context, f catalog.DataFile, lv int) (catalog.DataFile, error) {
	dir, err := layout.PartitionPath(levelDir(r.t, lv), r.desc)
	if err != nil {
		return f, err
	}
	dst := objstore.Join(dir, path.Base(f.Path))
	// The copy reads a path from the catalog and writes one derived from
	// it: both must be inside the table's directory.
	if err := layout.CheckWithin(r.t.Path, f.Path); err != nil {
		return f, err
	}
	if err := layout.CheckWithin(r.t.Path, dst); err != nil {
		return f, err
	}
	if err := r.intent.Claim(ctx, dst); err != nil {
		return f, err
	}
	src, err := r.c.store.Open(ctx, f.Path)
	if err != nil {
		return f, err
	}
	defer src.Close()
	w, err := r.c.store.Create(ctx, dst)
	if err != nil {
		return f, err
	}
	n, err := io.Copy(w, io.NewSectionReader(src, 0, src.Size()))
	if err != nil {
		_ = w.Abort()
		return f, fmt.Errorf("copy %s to %s: %w", f.Path, dst, err)
	}
	if err := w.Close(); err != nil {
		return f, err
	}
	out := catalog.DataFile{Path: dst, Size: n, ExistCols: f.ExistCols}
	r.written = append(r.written, catalog.FileOp{Path: dst, Op: "add", Size: n, ExistCols: f.ExistCols})
	return out, nil
}

func totalSize(fs []catalog.DataFile) int64 {
	var n int64
	for _, f := range fs {
		n += f.Size
	}
	return n
}
