// Package layout holds LakeSoul's on-disk layout rules: how primary-key rows
// are hashed into buckets, how range-partition values are rendered into
// partition descriptions and directories, and how data files are named.
//
// Everything here must stay bit-compatible with LakeSoul's native (Rust)
// writer in rust/lakesoul-io, because tables written by either implementation
// are read by the other:
//
//   - hash.go: utils/hash (Spark-style Murmur3, seed 42) and the
//     `hash % hash_bucket_num` rule of physical_plan/repartition.
//   - partition.go: constant.rs (sentinels, formats) and helpers
//     (format_scalar_value, into_scalar_value, partition desc helpers).
//   - paths.go: table and partition directories (names and values escaped
//     as LakeSoul's Spark writer escapes partition directories) and the
//     rule that confines every path to its table's directory.
//   - filename.go: the writer's `part-<random>_<bucket:0>4>.parquet` names and
//     helpers::extract_hash_bucket_id.
//
// Where LakeSoul's behaviour is a bug rather than a format (for example the
// `=`/`,` escaping in partition values), the deviation is documented at the
// point where it happens.
package layout
