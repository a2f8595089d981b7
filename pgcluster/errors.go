package pgcluster

import "errors"

var (
	// ErrNoBinaries reports that no PostgreSQL server binaries were found.
	ErrNoBinaries = errors.New("pgcluster: PostgreSQL binaries not found")

	// ErrAlreadyRunning reports that a live postmaster already serves the
	// data directory given to Open.
	ErrAlreadyRunning = errors.New("pgcluster: data directory already in use by a running postmaster")

	// ErrNotTraversable reports that the account PostgreSQL runs as cannot
	// reach the data (or socket) directory.
	ErrNotTraversable = errors.New("pgcluster: directory not reachable by the PostgreSQL account")
)
