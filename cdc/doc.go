// Package cdc replicates whole source databases into lake tables: a
// PostgreSQL publication (logical replication, pgoutput) or MySQL/MariaDB
// databases (row-based binlog). A subscription (CREATE SUBSCRIPTION, parsed
// by the engine) names the source and what to take; workers inside
// `lakesoul serve` lease subscriptions in the catalog and apply them.
//
// A subscription's life: the initial copy reads every table in one
// consistent snapshot of the source, taken at a known source position, and
// commits all of it with that position; from then on the worker streams the
// source's changes after the position and commits them in batches of whole
// source transactions. Each commit — data files of every table, schema
// changes, the new position — is one catalog transaction
// (lakesoul.cdc_commit, which calls the commit protocol of
// sqlfuncs/025_commit_many.sql), so the lake never shows part of a source
// transaction and, after any crash, the sync resumes from the position the
// lake holds: no change is applied twice or lost. The source is told a
// position is done (the PostgreSQL slot's flush position) only after the
// lake committed it.
//
// Invariants:
//   - only the holder of a subscription's lease applies it (cdc_commit
//     checks the lease token under the subscription's row lock);
//   - a stored position P means: every source transaction that committed
//     before P is in the lake, none after it;
//   - a table whose source change cannot be followed (a rename, an
//     incompatible type change) stops alone, with its last_error; the
//     others go on.
//
// Dependencies go one way: cdc uses writer, catalog, reader (its widening
// rule), schema, layout and objstore; the engine calls cdc, never the
// other way round.
package cdc
