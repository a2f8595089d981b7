package sqlerr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/internal/safego"
)

func TestFromStorageErrors(t *testing.T) {
	write := &fs.PathError{Op: "write", Path: "/srv/secret/warehouse/ns/t/part-AbCd_0000.parquet", Err: syscall.ENOSPC}
	for _, c := range []struct {
		err  error
		code string
		msg  string
	}{
		{fmt.Errorf("write file:///srv/secret/warehouse/ns/t/part-AbCd_0000.parquet: %w", write), DiskFull,
			`could not write file "part-AbCd_0000.parquet": No space left on device`},
		{fmt.Errorf("writer: %w", &fs.PathError{Op: "write", Path: "/srv/secret/x", Err: syscall.EDQUOT}), DiskFull,
			`could not write file "x": Disk quota exceeded`},
		{fmt.Errorf("open file:///srv/secret/p.parquet: %w", &fs.PathError{Op: "open", Path: "/srv/secret/p.parquet", Err: syscall.ENOENT}),
			UndefinedFile, `could not open file "p.parquet": No such file or directory`},
		{fmt.Errorf("read s3://bucket/secret/key: %w", fs.ErrNotExist), UndefinedFile, "could not open a data file: No such file or directory"},
		{&fs.PathError{Op: "read", Path: "/srv/secret/p.parquet", Err: syscall.EIO}, IOError, `could not read file "p.parquet": Input/output error`},
	} {
		e := From(c.err)
		if e.Code != c.code || e.Message != c.msg {
			t.Errorf("From(%v) = %s %q, want %s %q", c.err, e.Code, e.Message, c.code, c.msg)
		}
		if strings.Contains(e.Message+e.Detail+e.Hint, "/srv/secret") || strings.Contains(e.Message, "s3://") {
			t.Errorf("From(%v) shows a path: %q", c.err, e.Message)
		}
		if !errors.Is(e, c.err) && e.Err != c.err {
			t.Errorf("From(%v) lost the cause", c.err)
		}
	}
}

// A connection to the catalog that cannot be made or that broke is 08006,
// without the driver's text (address, socket, login).
func TestFromCatalogConnectionLost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := pgconn.Connect(ctx, "host=/nonexistent/secret-socket-dir port=5999 user=secret_login dbname=lakesoul connect_timeout=5")
	if err == nil {
		t.Fatal("connected to nothing")
	}
	for _, err := range []error{
		fmt.Errorf("snapshot of t: %w", err),
		fmt.Errorf("commit: %w", &pgconn.PgError{Severity: "FATAL", Code: "57P01", Message: "terminating connection due to administrator command"}),
		fmt.Errorf("query: %w", pgconn.ErrConnClosed),
	} {
		e := From(err)
		if e.Code != ConnectionFailure {
			t.Errorf("From(%v) = %s %q, want %s", err, e.Code, e.Message, ConnectionFailure)
		}
		for _, secret := range []string{"secret", "5999", "/nonexistent", "user="} {
			if strings.Contains(e.Message+e.Detail+e.Hint, secret) {
				t.Errorf("From(%v) shows %q: %q", err, secret, e.Message)
			}
		}
	}
	// The driver returns a broken read or write of a catalog connection as
	// the socket's own error (io.ErrUnexpectedEOF, a *net.OpError): the
	// catalog's dialer marks them, and only those are the catalog's.
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	for _, raw := range []error{io.ErrUnexpectedEOF, io.EOF, reset} {
		marked := fmt.Errorf("register a write intent: %w", &CatalogConnError{Err: raw})
		if e := From(marked); e.Code != ConnectionFailure {
			t.Errorf("From(%v) = %s %q, want %s", marked, e.Code, e.Message, ConnectionFailure)
		}
		if e := From(fmt.Errorf("read s3://bucket/key: %w", raw)); e.Code == ConnectionFailure {
			t.Errorf("an unmarked %v became %s", raw, e.Code)
		}
	}
	// An ERROR of the catalog is its answer, passed on as it is.
	if e := From(&pgconn.PgError{Severity: "ERROR", Code: "40001", Message: "conflict"}); e.Code != "40001" || e.Message != "conflict" {
		t.Errorf("catalog ERROR: %s %q", e.Code, e.Message)
	}
	// A cancelled statement is not a lost connection.
	if e := From(fmt.Errorf("query: %w", context.Canceled)); e.Code == ConnectionFailure {
		t.Errorf("context.Canceled became %s", e.Code)
	}
}

// Errors nobody gave a SQLSTATE are internal: the client learns that, the
// log (Err) gets the text.
func TestFromUnclassified(t *testing.T) {
	err := fmt.Errorf("writer: gather column v: arrow/array: index out of range [3] in /root/go/pkg/mod/x.go:12")
	e := From(err)
	if e.Code != InternalError || e.Message != "internal error" || e.Err != err {
		t.Errorf("From(%v) = %s %q", err, e.Code, e.Message)
	}
}

// A recovered panic is XX000 "internal error" whatever its value resembles
// (a missing file, a SQLSTATE of its own) and whatever wraps it.
func TestFromPanic(t *testing.T) {
	for _, v := range []any{
		"boom",
		&fs.PathError{Op: "open", Path: "/wh/ns/t/part-1.parquet", Err: syscall.ENOENT},
		New(UniqueViolation, "duplicate key"),
	} {
		p := &safego.PanicError{Value: v}
		for _, err := range []error{p, fmt.Errorf("write: %w", p), Wrap(CheckViolation, p, "check")} {
			if e := From(err); e.Code != InternalError || e.Message != "internal error" {
				t.Errorf("From(%v) = %s %q", err, e.Code, e.Message)
			}
		}
	}
}
