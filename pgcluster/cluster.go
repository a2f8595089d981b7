package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Cluster is a running PostgreSQL server over a data dir, started by Open.
// Its methods are safe for concurrent use.
type Cluster struct {
	opts      Options // effective: DataDir absolute, BinDir, SuperUser, Port set
	owner     *account
	socketDir string
	proc      *postmaster
	log       *slog.Logger

	stopMu  sync.Mutex
	stopped bool
}

// Open starts a PostgreSQL server over opts.DataDir, initialising the data
// dir first if it holds no cluster, and returns once the server accepts
// connections. It fails with ErrAlreadyRunning if a live postmaster serves
// the data dir, and with an error wrapping ErrNoBinaries if no PostgreSQL
// binaries are found. After a crash it clears what the dead server left
// behind; PostgreSQL then runs crash recovery before Open returns.
//
// The caller must call Stop. On Linux the server also shuts down if the
// calling process dies (see the package doc).
func Open(ctx context.Context, opts Options) (*Cluster, error) {
	o, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	owner, err := runAccount()
	if err != nil {
		return nil, err
	}
	fresh, err := prepareDataDir(o.DataDir, owner)
	if err != nil {
		return nil, err
	}
	stale := false
	if !fresh {
		if stale, err = checkNotRunning(o.DataDir); err != nil {
			return nil, err
		}
	}
	st, err := readState(o.DataDir)
	if err != nil {
		return nil, err
	}
	switch {
	case st.SuperUser != "" && o.SuperUser != "" && o.SuperUser != st.SuperUser:
		return nil, fmt.Errorf("pgcluster: data dir %s was initialised with superuser %q, not %q", o.DataDir, st.SuperUser, o.SuperUser)
	case st.SuperUser != "":
		o.SuperUser = st.SuperUser
	case o.SuperUser == "":
		o.SuperUser = DefaultSuperUser
	}
	if fresh {
		o.Logger.Info("pgcluster: initialising data dir", "dir", o.DataDir, "owner", owner.name)
		if err := initdb(ctx, o, owner); err != nil {
			return nil, err
		}
	}
	if o.Port == 0 {
		o.Port = st.Port
	}
	if o.Port == 0 {
		if o.Port, err = freePort(); err != nil {
			return nil, err
		}
	}
	socketDir, err := chooseSocketDir(o.DataDir, st.SocketDir, o.Port, owner)
	if err != nil {
		return nil, err
	}
	want := state{SuperUser: o.SuperUser, Port: o.Port}
	if socketDir != o.DataDir {
		want.SocketDir = socketDir
	}
	if want != st {
		if err := writeState(o.DataDir, want, owner); err != nil {
			return nil, err
		}
	}
	if stale {
		o.Logger.Warn("pgcluster: clearing after a server that did not shut down cleanly", "dir", o.DataDir)
		if err := clearStale(ctx, o.Logger, o.DataDir, socketDir, o.Port); err != nil {
			return nil, err
		}
	}

	logStart := logSize(o.DataDir)
	proc, err := startPostmaster(o, owner, socketDir)
	if err != nil {
		return nil, err
	}
	c := &Cluster{opts: o, owner: owner, socketDir: socketDir, proc: proc, log: o.Logger}
	if err := waitReady(ctx, proc, o.DataDir, logStart); err != nil {
		c.kill()
		return nil, err
	}
	if err := c.ping(ctx); err != nil {
		c.kill()
		return nil, err
	}
	o.Logger.Info("pgcluster: server ready", "dir", o.DataDir, "pid", proc.pid, "socket_dir", socketDir, "port", o.Port)
	return c, nil
}

// ping checks that ConnString works.
func (c *Cluster) ping(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, c.ConnString("postgres"))
	if err != nil {
		return fmt.Errorf("pgcluster: connect to new server: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "SELECT 1"); err != nil {
		return fmt.Errorf("pgcluster: query new server: %w", err)
	}
	return nil
}

// kill shuts the server down immediately (SIGQUIT; crash recovery runs on
// the next start) and waits for it to exit.
func (c *Cluster) kill() {
	c.stopMu.Lock()
	defer c.stopMu.Unlock()
	c.proc.signal(syscall.SIGQUIT)
	<-c.proc.exited
	c.stopped = true
}

// Stop shuts the server down in "fast" mode (SIGINT: sessions are
// disconnected, a checkpoint is written) and waits until it has exited.
// If ctx ends first, it escalates to an immediate shutdown (SIGQUIT),
// still waits for the exit, and returns the context's error. Stop is
// idempotent; it returns nil if the server had already exited on its own.
func (c *Cluster) Stop(ctx context.Context) error {
	c.stopMu.Lock()
	defer c.stopMu.Unlock()
	if c.stopped {
		return nil
	}
	c.stopped = true
	select {
	case <-c.proc.exited:
		c.log.Warn("pgcluster: server had already exited", "dir", c.opts.DataDir, "pid", c.proc.pid, "status", c.proc.waitErr)
		return nil
	default:
	}
	c.proc.signal(syscall.SIGINT)
	select {
	case <-c.proc.exited:
	case <-ctx.Done():
		c.proc.signal(syscall.SIGQUIT)
		<-c.proc.exited
		return fmt.Errorf("pgcluster: stop %s: fast shutdown interrupted, shut down immediately: %w", c.opts.DataDir, ctx.Err())
	}
	if c.proc.waitErr != nil {
		return fmt.Errorf("pgcluster: stop %s: postgres exited with %w", c.opts.DataDir, c.proc.waitErr)
	}
	c.log.Info("pgcluster: server stopped", "dir", c.opts.DataDir)
	return nil
}

// Done returns a channel closed once the server process has exited, after
// Stop or on its own.
func (c *Cluster) Done() <-chan struct{} { return c.proc.exited }

// DataDir returns the absolute data directory.
func (c *Cluster) DataDir() string { return c.opts.DataDir }

// Port returns the server's port (the socket file name, and the TCP port
// with ListenTCP). It is recorded in the data dir and reused on restart.
func (c *Cluster) Port() int { return c.opts.Port }

// SocketDir returns the directory holding the server's unix socket.
func (c *Cluster) SocketDir() string { return c.socketDir }

// PID returns the postmaster's process ID.
func (c *Cluster) PID() int { return c.proc.pid }

// SuperUser returns the superuser role name ConnString connects as.
func (c *Cluster) SuperUser() string { return c.opts.SuperUser }

// Options returns the effective options, with BinDir, SuperUser and Port
// filled in: passing them to Open after Stop restarts the same cluster.
func (c *Cluster) Options() Options {
	o := c.opts
	o.Settings = maps.Clone(o.Settings)
	return o
}

// CreateDatabase creates database name unless it already exists.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) error {
	conn, err := pgx.Connect(ctx, c.ConnString("postgres"))
	if err != nil {
		return fmt.Errorf("pgcluster: create database %q: %w", name, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("pgcluster: create database %q: %w", name, err)
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // duplicate_database: created concurrently
		return nil
	}
	if err != nil {
		return fmt.Errorf("pgcluster: create database %q: %w", name, err)
	}
	return nil
}
