package metrics

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// The event metrics. Each is registered with every Server's registry.
var (
	statements = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lakesoul_statements_total",
		Help: "Statements executed, by command (the statement's tag: SELECT, INSERT, COPY, …) and SQLSTATE (00000 for success).",
	}, []string{"kind", "sqlstate"})
	statementSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "lakesoul_statement_duration_seconds",
		Help:    "Time from a statement's first execution step to its end, by command.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 4, 11), // 0.5 ms … ~9 min
	}, []string{"kind"})
	rowsRead = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "lakesoul_rows_read_total",
		Help: "Rows read from data files by the merge-on-read reader (before it collapses upserts). DuckDB's direct scans of append tables on local disk are not counted.",
	})
	rowsWritten = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "lakesoul_rows_written_total",
		Help: "Rows written into data files (INSERT, COPY, UPDATE, MERGE, import, compaction, CDC).",
	})
	bytesRead = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lakesoul_read_bytes_total",
		Help: "Bytes of data files read through the object-store layer (scans by the merge-on-read reader, imports, compaction), by store: file or s3 (S3 bytes served from the disk cache included). DuckDB's direct scans of local files are not counted.",
	}, []string{"store"})
	bytesReadFile = bytesRead.WithLabelValues(StoreFile)
	bytesReadS3   = bytesRead.WithLabelValues(StoreS3)
	bytesWritten  = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "lakesoul_written_bytes_total",
		Help: "Bytes of Parquet data files written.",
	})
	commits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lakesoul_commits_total",
		Help: "Catalog commits, by outcome: committed, conflict (40001: a concurrent writer won), failed.",
	}, []string{"outcome"})
	commitRetries = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "lakesoul_commit_retries_total",
		Help: "Commits re-sent after the catalog connection failed while they were in flight.",
	})
	compactionJobs = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "lakesoul_compaction_job_duration_seconds",
		Help:    "Duration of compaction jobs, by outcome: compacted, dropped (the partition changed meanwhile), skipped, failed.",
		Buckets: prometheus.ExponentialBuckets(0.01, 4, 10), // 10 ms … ~44 min
	}, []string{"outcome"})
	compactionFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lakesoul_compaction_failures_total",
		Help: "Compaction jobs that failed, by the SQLSTATE of their error (53100 disk full, 08006 catalog connection lost, 08007 commit outcome unknown, XX000 unclassified, …); each is retried after a backoff.",
	}, []string{"sqlstate"})
	importedRows = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "lakesoul_import_rows_total",
		Help: "Rows committed by CALL lakesoul.import.",
	})
	rowConflicts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lakesoul_row_conflicts_total",
		Help: "Read-modify-write statements whose rows another writer changed since their snapshot, by outcome: rerun (READ COMMITTED ran the statement again), failed (40001).",
	}, []string{"outcome"})
	rowConflictReruns atomic.Int64
)

func eventCollectors() []prometheus.Collector {
	return []prometheus.Collector{statements, statementSeconds, rowsRead, bytesRead, rowsWritten, bytesWritten,
		commits, commitRetries, compactionJobs, compactionFailures, importedRows, rowConflicts}
}

// Statement records one statement's end: its command tag, its SQLSTATE
// ("00000" when it succeeded) and how long it ran.
func Statement(kind, sqlstate string, d time.Duration) {
	statements.WithLabelValues(kind, sqlstate).Inc()
	statementSeconds.WithLabelValues(kind).Observe(d.Seconds())
}

// RowsRead counts rows a scan read from a data file.
func RowsRead(n int64) { rowsRead.Add(float64(n)) }

// Stores of DataRead.
const (
	StoreFile = "file"
	StoreS3   = "s3"
)

// DataRead counts n bytes read from a data file on store (StoreFile,
// StoreS3).
func DataRead(store string, n int) {
	if n <= 0 {
		return
	}
	if store == StoreS3 {
		bytesReadS3.Add(float64(n))
		return
	}
	bytesReadFile.Add(float64(n))
}

// FileWritten counts a data file written: its rows and bytes.
func FileWritten(rows, bytes int64) {
	rowsWritten.Add(float64(rows))
	bytesWritten.Add(float64(bytes))
}

// Commit outcomes.
const (
	Committed = "committed"
	Conflict  = "conflict"
	Failed    = "failed"
)

// Commit counts a catalog commit's outcome (Committed, Conflict, Failed).
func Commit(outcome string) { commits.WithLabelValues(outcome).Inc() }

// CommitRetry counts a commit re-sent after a connection failure.
func CommitRetry() { commitRetries.Inc() }

// Commits is how many catalog commits ended with outcome.
func Commits(outcome string) float64 {
	var m dto.Metric
	if err := commits.WithLabelValues(outcome).Write(&m); err != nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

// CommitRetries is how many commits were re-sent after a connection failure.
func CommitRetries() float64 {
	var m dto.Metric
	if err := commitRetries.Write(&m); err != nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

// CompactionJob records a compaction job's outcome and duration.
func CompactionJob(outcome string, d time.Duration) {
	compactionJobs.WithLabelValues(outcome).Observe(d.Seconds())
}

// CompactionFailure counts a failed compaction job by its SQLSTATE.
func CompactionFailure(sqlstate string) { compactionFailures.WithLabelValues(sqlstate).Inc() }

// CompactionFailures is how many compaction jobs failed with sqlstate.
func CompactionFailures(sqlstate string) float64 {
	var m dto.Metric
	if err := compactionFailures.WithLabelValues(sqlstate).Write(&m); err != nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

// Imported counts rows committed by an import.
func Imported(rows int64) { importedRows.Add(float64(rows)) }

// RowConflict counts a read-modify-write statement whose rows changed under
// it: rerun true when it ran again (READ COMMITTED), false when it failed.
func RowConflict(rerun bool) {
	if rerun {
		rowConflicts.WithLabelValues("rerun").Inc()
		rowConflictReruns.Add(1)
		return
	}
	rowConflicts.WithLabelValues("failed").Inc()
}

// RowConflictReruns is how many statements this process ran again (for
// benchmarks that run the server in-process).
func RowConflictReruns() int64 { return rowConflictReruns.Load() }
