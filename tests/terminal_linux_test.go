package tests

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: the controlling side the test reads and
// the terminal side a child writes to.
func openPTY(t *testing.T) (control, term *os.File) {
	t.Helper()
	control, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(control.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		control.Close()
		t.Skipf("unlocking a pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		control.Close()
		t.Skipf("naming a pseudo-terminal: %v", err)
	}
	term, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		control.Close()
		t.Skipf("opening /dev/pts/%d: %v", n, err)
	}
	t.Cleanup(func() { control.Close(); term.Close() })
	return control, term
}

// runOnTerminal runs cmd with its stderr on a pseudo-terminal and its
// stdout into a buffer, and returns what each received.
func runOnTerminal(t *testing.T, cmd *exec.Cmd) (screen, stdout string) {
	t.Helper()
	control, term := openPTY(t)
	var out, scr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, term
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	term.Close() // the child holds the terminal now; reads end (EIO) when it exits
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(&scr, control)
		copied <- err
	}()
	werr := cmd.Wait()
	if err := <-copied; err != nil && !errors.Is(err, syscall.EIO) {
		t.Fatal(err)
	}
	if werr != nil {
		t.Fatalf("%s: %v\n%s%q", strings.Join(cmd.Args, " "), werr, out.String(), scr.String())
	}
	return scr.String(), out.String()
}

// TestImportCLITerminal: with stderr on a terminal, `lakesoul import`
// shows the server's progress NOTICEs on a status line redrawn in place
// and erases it before printing what it imported; stdout (not a terminal
// here) gets no control characters.
func TestImportCLITerminal(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	dir := importDir(t)
	writeParquet(t, filepath.Join(dir, "a.parquet"), importRows(1, 20, "tty"))
	mustExec(t, ctx, c, "CREATE SCHEMA impterm", "CREATE TABLE impterm.t (id bigint, k text, v double precision)")
	cmd := exec.CommandContext(ctx, lakesoulBin, "import", "--url", srv.dsn(adminRole, sharedPassword, database), "impterm.t", "file://"+dir+"/", "--format", "parquet")
	got, stdout := runOnTerminal(t, cmd)
	for _, want := range []string{
		"\r\x1b[Kimport impterm.t  ",                     // the status line, redrawn in place
		"import into impterm.t: 1 of 1 files, 20 rows",   // the server's NOTICE on it
		"import into impterm.t: 1 of 1 files, 20 rows, ", // …with bytes and rates
		"(committed)", // the last NOTICE
	} {
		if !strings.Contains(got, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, got)
		}
	}
	if !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("the status line is not erased at the end: %q", got)
	}
	if !strings.Contains(stdout, "imported 20 rows from 1 files into impterm.t") || strings.ContainsAny(stdout, "\r\x1b") {
		t.Errorf("stdout: %q", stdout)
	}
}

// TestBenchTerminal: with stderr on a terminal, `lakesoul bench` keeps a
// status line of its measurements so far; its log lines scroll above it
// (the line is erased before each), and the JSON rows on stdout (not a
// terminal) stay clean.
func TestBenchTerminal(t *testing.T) {
	t.Parallel()
	requirePG(t)
	ctx := testCtx(t)
	cmd := exec.CommandContext(ctx, lakesoulBin, "bench", "commits", "--commits", "100", "--writers", "1", "--phases", "commit")
	cmd.Dir = t.TempDir()
	screen, stdout := runOnTerminal(t, cmd)
	for _, want := range []string{
		"\r\x1b[Kbench commits  ",
		"1 measurements; last: commit lakesoul, 100 rows in ",
		"2 measurements; last: commit lakesoul, 100 rows in ",
		"\r\x1b[Kcommits: 1 writers, same partitions, 100 commits\r\n", // a log line (the terminal turns \n into \r\n), the status line erased first
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, screen)
		}
	}
	if !strings.HasSuffix(screen, "\r\x1b[K") {
		t.Errorf("the status line is not erased at the end: %q", screen)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 2 || strings.ContainsAny(stdout, "\r\x1b") {
		t.Errorf("stdout: %q", stdout)
	}
}
