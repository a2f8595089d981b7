// Package pgjson holds PostgreSQL's json and jsonb semantics for values that
// DuckDB carries as text: parsing, jsonb's canonical text (keys sorted and
// unique, PostgreSQL's spacing, numbers as numeric prints them), and the
// operators whose PostgreSQL meaning DuckDB's JSON functions do not share —
// field and element access (->, ->>, #>, #>>), containment (@>, <@) and
// existence (?, ?|, ?&).
//
// Invariant: a json value keeps the text it was written with (its fields
// and elements are slices of that text, as PostgreSQL's json functions
// return them); a jsonb value is only ever rendered canonically.
package pgjson
