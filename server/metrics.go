package server

import (
	"context"

	"github.com/lakesoul-go/lakesoul/metrics"
	"github.com/lakesoul-go/lakesoul/objstore"
)

// metricsSources hands the metrics listener what the running parts count:
// pgwire's sessions, the object store's counters, the catalog's queue and
// lag, and readiness (catalog reachable, migrations current).
func (s *Server) metricsSources() metrics.Sources {
	src := metrics.Sources{
		Connections: func() metrics.ConnectionStats {
			st := metrics.ConnectionStats{Accepted: s.wire.SessionsAccepted(), ByState: map[string]int{}}
			for _, a := range s.wire.Activity() {
				st.ByState[a.State]++
			}
			return st
		},
		Catalog: func(ctx context.Context) (metrics.CatalogStats, error) {
			st, err := s.cat.OperationalStats(ctx)
			if err != nil {
				return metrics.CatalogStats{}, err
			}
			out := metrics.CatalogStats{CompactionQueued: st.CompactionQueued, CompactionRunning: st.CompactionRunning,
				UncompactedVersions: st.UncompactedVersions}
			for _, l := range st.Subscriptions {
				out.Subscriptions = append(out.Subscriptions, metrics.SubscriptionStats{Name: l.Name, State: l.State,
					LagBytes: l.LagBytes, LagSeconds: l.LagSeconds})
			}
			return out, nil
		},
		Ready:       s.cat.Ready,
		TableLabels: s.cfg.MetricsTableLabels,
	}
	if s3, ok := s.store.(*objstore.S3); ok {
		src.ObjectStore = func() (metrics.ObjectStoreStats, bool) {
			st := s3.Stats()
			return metrics.ObjectStoreStats{Requests: st.Requests, Errors: st.Failures, Retries: st.Retries,
				BytesRead: st.BytesIn, BytesWritten: st.BytesOut,
				CacheHits: st.Cache.Hits, CacheMisses: st.Cache.Misses, CacheHitBytes: st.Cache.HitBytes,
				CacheMissBytes: st.Cache.MissBytes, CacheBytes: st.Cache.Bytes, CacheCapacity: st.Cache.Capacity}, true
		}
	}
	return src
}
