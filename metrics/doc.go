// Package metrics is the one home of the server's Prometheus metrics: the
// event counters and histograms that instrumentation points feed (this
// file's package functions), the values read at scrape time from the parts
// that keep their own counters (Sources), and the HTTP listener that serves
// /metrics, /healthz and /readyz (Serve).
//
// The package imports nothing of the project, so any package may call its
// functions without an import cycle; packages that keep counters of their
// own (objstore, compaction, pgwire, catalog) expose them through methods
// that the server hands to Serve as Sources, and never import this package
// for that. Names follow Prometheus' conventions: lakesoul_<what>_total for
// counters, _seconds and _bytes for units.
//
// Invariant: the event metrics are process-wide (several servers in one
// process, as tests run them, add to the same counters); the scrape-time
// values are those of the Server that serves them.
//
// Invariant: nothing served names a workspace's objects unless the operator
// asked (Sources.TableLabels): whoever reaches the listener reads it without
// logging in, so it listens on loopback unless given a host.
package metrics
