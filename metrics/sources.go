package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Sources are the values a Server reads from the running parts each time it
// is scraped. A nil field is left out.
type Sources struct {
	// Connections reports the pgwire sessions.
	Connections func() ConnectionStats
	// ObjectStore reports the object store's counters; ok is false for a
	// store that keeps none (local disk).
	ObjectStore func() (st ObjectStoreStats, ok bool)
	// Catalog reads the catalog's operational state.
	Catalog func(ctx context.Context) (CatalogStats, error)
	// Ready reports why the server cannot serve (nil: it can): the catalog
	// unreachable, or its migrations behind the binary's.
	Ready func(ctx context.Context) error
	// TableLabels serves per-table series (lakesoul_table_uncompacted_versions
	// {table}), which name every workspace's tables to whoever reaches the
	// listener; without it only their maximum is served.
	TableLabels bool
}

// ConnectionStats describe the client connections of a pgwire server.
type ConnectionStats struct {
	// Accepted counts the sessions started since the server started.
	Accepted int64
	// ByState counts the open sessions by pg_stat_activity state
	// (active, idle, idle in transaction, …).
	ByState map[string]int
}

// ObjectStoreStats are an object store's counters since it was opened
// (CacheBytes and CacheCapacity are current values).
type ObjectStoreStats struct {
	Requests, Errors, Retries, BytesRead, BytesWritten    int64
	CacheHits, CacheMisses, CacheHitBytes, CacheMissBytes int64
	CacheBytes, CacheCapacity                             int64
}

// CatalogStats are the operational state kept in the catalog.
type CatalogStats struct {
	// CompactionQueued counts compaction jobs waiting; CompactionRunning
	// those claimed by a worker now.
	CompactionQueued, CompactionRunning int64
	// UncompactedVersions is, per table ("namespace.table"), the versions
	// committed since each partition's last compaction, summed over its
	// partitions.
	UncompactedVersions map[string]int64
	// Subscriptions are the CDC subscriptions' states and lags.
	Subscriptions []SubscriptionStats
}

// SubscriptionStats is one CDC subscription's lag behind its source.
type SubscriptionStats struct {
	Name, State string
	// LagBytes is the WAL distance behind the source (PostgreSQL sources
	// only; negative when unknown); LagSeconds the age of the newest source
	// change not yet in the lake (negative when unknown).
	LagBytes   int64
	LagSeconds float64
}

// scrapeTimeout bounds the catalog's part of a scrape.
const scrapeTimeout = 5 * time.Second

var (
	descSessions = prometheus.NewDesc("lakesoul_sessions", "Client sessions open now, by state.", []string{"state"}, nil)
	descAccepted = prometheus.NewDesc("lakesoul_connections_total", "Client sessions started since the server started.", nil, nil)

	descStoreRequests  = prometheus.NewDesc("lakesoul_objstore_requests_total", "Object-store requests (attempts, retries included).", nil, nil)
	descStoreErrors    = prometheus.NewDesc("lakesoul_objstore_errors_total", "Object-store operations that failed after their retries.", nil, nil)
	descStoreRetries   = prometheus.NewDesc("lakesoul_objstore_retries_total", "Object-store requests retried after a transient failure.", nil, nil)
	descStoreRead      = prometheus.NewDesc("lakesoul_objstore_read_bytes_total", "Bytes received from the object store.", nil, nil)
	descStoreWritten   = prometheus.NewDesc("lakesoul_objstore_written_bytes_total", "Bytes sent to the object store.", nil, nil)
	descCacheHits      = prometheus.NewDesc("lakesoul_cache_hits_total", "Disk-cache block reads served from disk.", nil, nil)
	descCacheMisses    = prometheus.NewDesc("lakesoul_cache_misses_total", "Disk-cache block reads fetched from the object store.", nil, nil)
	descCacheHitBytes  = prometheus.NewDesc("lakesoul_cache_hit_bytes_total", "Bytes served from the disk cache.", nil, nil)
	descCacheMissBytes = prometheus.NewDesc("lakesoul_cache_miss_bytes_total", "Bytes fetched into the disk cache on demand.", nil, nil)
	descCacheBytes     = prometheus.NewDesc("lakesoul_cache_bytes", "Bytes held in the disk cache now.", nil, nil)
	descCacheCapacity  = prometheus.NewDesc("lakesoul_cache_capacity_bytes", "Capacity of the disk cache.", nil, nil)

	descCatalogUp        = prometheus.NewDesc("lakesoul_catalog_up", "1 when the catalog answered this scrape's queries, 0 otherwise.", nil, nil)
	descCompactionQueue  = prometheus.NewDesc("lakesoul_compaction_queue_jobs", "Compaction jobs in the catalog's queue, by state (queued, running).", []string{"state"}, nil)
	descUncompacted      = prometheus.NewDesc("lakesoul_table_uncompacted_versions", "Versions committed since the last compaction, summed over the table's partitions.", []string{"table"}, nil)
	descUncompactedMax   = prometheus.NewDesc("lakesoul_table_uncompacted_versions_max", "The most versions any one table committed since its last compaction (summed over its partitions).", nil, nil)
	descSubLagBytes      = prometheus.NewDesc("lakesoul_subscription_lag_bytes", "WAL bytes a PostgreSQL CDC subscription is behind its source.", []string{"subscription"}, nil)
	descSubLagSeconds    = prometheus.NewDesc("lakesoul_subscription_lag_seconds", "Age of the newest source change of a CDC subscription not yet in the lake.", []string{"subscription"}, nil)
	descSubscriptionInfo = prometheus.NewDesc("lakesoul_subscription_state", "1 for a CDC subscription's current state.", []string{"subscription", "state"}, nil)
)

// sourceCollector turns Sources into metrics at scrape time. It is an
// unchecked collector (Describe sends nothing): the label values of the
// catalog's metrics are known only when they are read.
type sourceCollector struct{ src Sources }

func (c *sourceCollector) Describe(chan<- *prometheus.Desc) {}

func (c *sourceCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	if c.src.Connections != nil {
		st := c.src.Connections()
		counter(descAccepted, st.Accepted)
		for _, state := range []string{"active", "idle", "idle in transaction", "idle in transaction (aborted)"} {
			gauge(descSessions, float64(st.ByState[state]), state)
		}
	}
	if c.src.ObjectStore != nil {
		if st, ok := c.src.ObjectStore(); ok {
			counter(descStoreRequests, st.Requests)
			counter(descStoreErrors, st.Errors)
			counter(descStoreRetries, st.Retries)
			counter(descStoreRead, st.BytesRead)
			counter(descStoreWritten, st.BytesWritten)
			counter(descCacheHits, st.CacheHits)
			counter(descCacheMisses, st.CacheMisses)
			counter(descCacheHitBytes, st.CacheHitBytes)
			counter(descCacheMissBytes, st.CacheMissBytes)
			gauge(descCacheBytes, float64(st.CacheBytes))
			gauge(descCacheCapacity, float64(st.CacheCapacity))
		}
	}
	if c.src.Catalog != nil {
		ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
		st, err := c.src.Catalog(ctx)
		cancel()
		if err != nil {
			gauge(descCatalogUp, 0)
			return
		}
		gauge(descCatalogUp, 1)
		gauge(descCompactionQueue, float64(st.CompactionQueued), "queued")
		gauge(descCompactionQueue, float64(st.CompactionRunning), "running")
		var most int64
		for table, n := range st.UncompactedVersions {
			most = max(most, n)
			if c.src.TableLabels {
				gauge(descUncompacted, float64(n), table)
			}
		}
		gauge(descUncompactedMax, float64(most))
		for _, s := range st.Subscriptions {
			gauge(descSubscriptionInfo, 1, s.Name, s.State)
			if s.LagBytes >= 0 {
				gauge(descSubLagBytes, float64(s.LagBytes), s.Name)
			}
			if s.LagSeconds >= 0 {
				gauge(descSubLagSeconds, s.LagSeconds, s.Name)
			}
		}
	}
}
