package tests

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPgcli: pgcli (prompt_toolkit on a terminal) connects — its startup
// and completion queries over pg_catalog — runs a query over a lake table
// and a \d, and quits, with no error on the screen or in its log (where
// the completion refresher's failures go).
func TestPgcli(t *testing.T) {
	t.Parallel()
	pgcli := requireClient(t, "pgcli", "pgcli", "pgcli")
	requirePG(t)
	// A server of its own: pgcli reads schemas, tables and columns in
	// separate queries, so another test's CREATE SCHEMA between them
	// breaks its completion refresher (KeyError), against PostgreSQL too.
	srv := startServerT(t, filepath.Join(testBaseDir(t), "data"), "pgcli-Secret!")
	defer func() {
		if err := srv.stop(); err != nil {
			t.Error(err)
		}
	}()
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA cli_pgcli", "CREATE TABLE cli_pgcli.items (id int PRIMARY KEY, label text)",
		"INSERT INTO cli_pgcli.items VALUES (1, 'first-item'), (2, 'second-item')")
	control, term := openPTY(t)
	cmd := exec.CommandContext(ctx, pgcli, "--less-chatty", srv.dsn(adminRole, "pgcli-Secret!", database))
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "PAGER=cat", "TERM=xterm", "PROMPT_TOOLKIT_NO_CPR=1", "COLUMNS=120", "LINES=40")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term, term, term
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	term.Close()
	var mu sync.Mutex
	var screen bytes.Buffer
	done := make(chan struct{})
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := control.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				close(done)
				return
			}
		}
	}()
	// waitFor waits until the screen shows what after mark (its length
	// when the last command was typed: "label" of the query's echo is not
	// the \d's output).
	mark := 0
	waitFor := func(what string) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			mu.Lock()
			ok := strings.Contains(screen.String()[mark:], what)
			mu.Unlock()
			if ok {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("pgcli never showed %q:\n%q", what, screen.String()[mark:])
	}
	send := func(line string) {
		mu.Lock()
		mark = screen.Len()
		mu.Unlock()
		io.WriteString(control, line+"\r")
	}
	waitFor("lakesoul>")
	send("SELECT label FROM cli_pgcli.items ORDER BY id;")
	waitFor("second-item")
	send("\\d cli_pgcli.items")
	waitFor("label")
	send("\\q")
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("pgcli did not quit")
	}
	cmd.Wait()
	mu.Lock()
	defer mu.Unlock()
	if s := screen.String(); strings.Contains(strings.ToLower(s), "error") || strings.Contains(s, "Traceback") {
		t.Errorf("pgcli showed an error:\n%q", s)
	}
	// Its completion refresher's queries fail into its log, not on screen.
	logText, err := os.ReadFile(filepath.Join(home, "pgcli", "log"))
	if err != nil {
		t.Fatalf("pgcli's log: %v", err)
	}
	if l := string(logText); strings.Contains(l, "ERROR") || strings.Contains(l, "Traceback") {
		t.Errorf("pgcli's log has errors:\n%s", l)
	}
}
