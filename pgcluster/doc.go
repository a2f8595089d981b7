// Package pgcluster runs a private PostgreSQL cluster: the embedded catalog
// of `lakesoul serve` and the throwaway server of the tests.
//
// # Ownership
//
// A cluster is a data directory plus at most one postmaster serving it.
// The data directory belongs to the account PostgreSQL runs as: the calling
// user, or, when the caller is root (PostgreSQL refuses to run as root), the
// `postgres` OS account. In the root case Open chowns a fresh data dir to
// that account and runs every PostgreSQL binary under its uid/gid; it
// refuses (with ErrNotTraversable) a data dir that the account could not
// reach, such as one under /root. The directory has mode 0700 and must not
// be shared with anything but this package.
//
// # Process
//
// The postmaster is started directly (not through pg_ctl) as a child of the
// calling process, in its own process group, so terminal signals aimed at
// the caller do not reach it and the caller decides the shutdown order. On
// Linux it is also told to shut down fast (SIGINT) when the calling process
// dies, so a crashed caller does not leave an orphaned server behind. Stop
// shuts it down fast and waits until it has exited.
//
// One data dir, one postmaster: Open fails with ErrAlreadyRunning when a live
// postmaster already serves the data dir; it never attaches to it. A stale
// postmaster.pid (a crash, a kill -9) does not block Open: processes left
// over from the dead postmaster are killed and PostgreSQL runs crash
// recovery.
//
// # What survives a restart
//
// Everything in the data dir: databases, roles and, in the file
// lakesoul-cluster.json, the superuser name, the port and the unix socket
// directory. Reopening a data dir therefore gives the same ConnString, so
// saved URLs stay valid. The socket directory is the data dir itself when
// the socket path fits in sun_path, else a short private directory under
// os.TempDir(), which Open recreates if it was removed.
//
// # Connections
//
// TCP is off unless Options.ListenTCP; clients connect through the unix
// socket, whose permissions (0700) admit only the account that runs
// PostgreSQL (and root). Authentication is "trust": access control is the
// socket's file permissions. With ListenTCP every local user can connect
// to 127.0.0.1 as the superuser.
package pgcluster
