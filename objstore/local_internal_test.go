package objstore

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestLocalWriterSyncs: a local file is durable when its writer closes —
// its data and the directory entries naming it (the new directories'
// parents included) are fsynced.
func TestLocalWriterSyncs(t *testing.T) {
	var synced []string
	oldFile := syncFile
	syncFile = func(f *os.File) error {
		synced = append(synced, f.Name())
		return oldFile(f)
	}
	t.Cleanup(func() { syncFile = oldFile })
	root := t.TempDir()
	path := filepath.Join(root, "t", "p=1", "part-0.parquet")
	w, err := Local{}.Create(context.Background(), LocalURI(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("rows")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{path, filepath.Join(root, "t", "p=1"), filepath.Join(root, "t"), root} {
		if !slices.Contains(synced, want) {
			t.Errorf("%s not synced (synced: %q)", want, synced)
		}
	}
	// A second file in the same directory syncs the file and its directory.
	synced = nil
	w, err = Local{}.Create(context.Background(), LocalURI(filepath.Join(root, "t", "p=1", "part-1.parquet")))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(synced) != 2 {
		t.Errorf("second file synced %q, want the file and its directory", synced)
	}
}
