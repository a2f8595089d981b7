package main

import (
	"flag"
	"slices"
	"testing"
)

// TestReorderFlags: flags after the positional arguments move before them,
// a boolean flag without "=" does not take the next argument as its value.
func TestReorderFlags(t *testing.T) {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.String("format", "", "")
	fs.Bool("header", false, "")
	fs.Bool("register", false, "")
	got := reorderFlags(fs, []string{"s.t", "--header", "file:///x", "--format", "csv", "-register", "--delimiter=;"})
	want := []string{"--header", "--format", "csv", "-register", "--delimiter=;", "s.t", "file:///x"}
	if !slices.Equal(got, want) {
		t.Fatalf("reorderFlags = %q, want %q", got, want)
	}
}
