package layout

import (
	"errors"
	"testing"
)

// TestCheckRecordedDir: a recorded directory is accepted when the path is it
// and it is a table directory of the table's namespace, whatever the
// table's name; a record never lets a path leave the namespace's directory.
func TestCheckRecordedDir(t *testing.T) {
	const wh = "file:///wh"
	cases := []struct {
		path, ns, name, recorded string
		ok                       bool
	}{
		{"file:///wh/s/t", "s", "t", "", true},                                 // no record: the name's rule
		{"file:///wh/s/old", "s", "t", "", false},                              // renamed without a record
		{"file:///wh/s/old", "s", "t", "file:///wh/s/old", true},               // renamed, recorded
		{"file:///wh/s/t_0a1b2c3d", "s", "t", "file:///wh/s/t_0a1b2c3d", true}, // fresh sibling
		{"file:///wh/s/old", "s", "t", "file:///wh/s/other", false},            // path is not the record
		{"file:///wh/x/old", "s", "t", "file:///wh/x/old", false},              // record in another namespace
		{"file:///wh/s/a/b", "s", "t", "file:///wh/s/a/b", false},              // not one segment below
		{"file:///wh/s", "s", "t", "file:///wh/s", false},                      // the namespace itself
		{"file:///elsewhere/s/old", "s", "t", "file:///elsewhere/s/old", false},
		{"file:///wh/s/a%2Fb", "s", "t", "file:///wh/s/a%2Fb", true},  // an escaped name
		{"file:///wh/s/a%2fb", "s", "t", "file:///wh/s/a%2fb", false}, // no name escapes so
		{"file:///wh/s/%2E%2E", "s", "t", "file:///wh/s/..", false},
	}
	for _, c := range cases {
		err := CheckRecordedDir(c.path, wh, c.ns, c.name, c.recorded)
		if (err == nil) != c.ok {
			t.Errorf("CheckRecordedDir(%q, %q, %q, %q) = %v, want ok=%v", c.path, c.ns, c.name, c.recorded, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrOutsideTable) {
			t.Errorf("CheckRecordedDir(%q): %v does not wrap ErrOutsideTable", c.path, err)
		}
	}
	// Without a warehouse: any root, the namespace's segment before the
	// directory's.
	if err := CheckRecordedDir("s3://b/wh/s/old", "", "s", "t", "s3://b/wh/s/old"); err != nil {
		t.Errorf("no warehouse, recorded: %v", err)
	}
	if err := CheckRecordedDir("s3://b/wh/x/old", "", "s", "t", "s3://b/wh/x/old"); err == nil {
		t.Error("no warehouse, record in another namespace: accepted")
	}
}
