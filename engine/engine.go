// Package engine is the SQL layer: it parses statements (pg_query_go), routes
// them — DDL and writes to the catalog and writer, queries over lake tables to
// DuckDB through the lakesoul_scan bridge, pg_catalog/information_schema
// queries to the catalog PostgreSQL through the pgcatalog emulation — and
// implements pgwire's Session contract.
package engine

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/duckstream"
	"github.com/lakesoul-go/lakesoul/listen"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// DatabaseName is the only database the server serves.
const DatabaseName = "lakesoul"

// Config configures an Engine.
type Config struct {
	Catalog *catalog.Catalog
	// Warehouse is the root URI new tables are created under
	// (<warehouse>/<namespace>/<table>).
	Warehouse string
	Store     objstore.Store
	Logger    *slog.Logger
	// DuckDBThreads bounds DuckDB's worker threads (0 = DuckDB's default).
	DuckDBThreads int
	// MemoryLimit is DuckDB's memory_limit in bytes, shared by all sessions
	// (0 = DuckDB's default, 80% of RAM).
	MemoryLimit int64
	// TempDir is where the engine spills: DuckDB into its subdirectory
	// duckdb (the one directory DuckDB may open, see openDuckDB), merges of
	// many files into the directory itself. Empty: a directory of its own
	// in os.TempDir(), removed at Close. TempLimit bounds what DuckDB may
	// put there in bytes (0 = DuckDB's default, 90% of the free space).
	TempDir   string
	TempLimit int64
	// NotifyQueueLimit bounds the bytes of NOTIFYs queued for this
	// server's sessions (0 = listen.DefaultQueue; one session may hold an
	// eighth of it: listen.Limits).
	NotifyQueueLimit int64
	// SessionsPerRole bounds the sessions of a role that has no CONNECTION
	// LIMIT of its own (0 = none; superusers and the admin have none).
	SessionsPerRole int
	// IdleInTransactionTimeout is idle_in_transaction_session_timeout's
	// default (0 = none).
	IdleInTransactionTimeout time.Duration
	// CatalogStatementTimeout caps statement_timeout for the SQL users
	// write that runs on the catalog (catalogtx.go; 0 = no cap).
	CatalogStatementTimeout time.Duration
}

// Engine is shared by all sessions.
type Engine struct {
	// settingNames are PostgreSQL's configuration parameters
	// (knownSetting), loaded once.
	settingNamesOnce sync.Once
	settingNames     map[string]bool
	cfg              Config
	cat              *catalog.Catalog
	store            objstore.Store
	log              *slog.Logger
	duck             *sql.DB
	scans            *scanRegistry
	// snaps caches resolved file lists by partition head (snapcache.go).
	snaps *snapshotCache
	// snapFlights coalesces concurrent statements' snapshot queries
	// (snapflight.go).
	snapFlights snapFlights
	// vectors builds vector index segments in the background (vectorindex.go).
	vectors       *vectorIndexes
	ivfs          *ivfCache
	vrows         *vectorRowCache
	serverVersion string
	// ownTemp is the temp directory the engine made for itself (no
	// Config.TempDir), removed at Close.
	ownTemp string
	// engineFuncs are the functions the engine created in DuckDB, part of
	// what user SQL may call (duckgate.go).
	engineFuncs map[string]bool
	// typeNames are format_type's names of pg_catalog's types, by OID
	// (pg_typeof of lake columns, pgtypeof.go).
	typeNames map[uint32]string
	// catalogRole is the role the catalog pool connects as; sessions of
	// other roles run their catalog work under SET LOCAL ROLE.
	catalogRole string
	// parsing bounds the statement text parsed at once (parsebudget.go).
	parsing *parseBudget
	// valueBudget bounds the values a statement's growing functions hold at
	// once on one DuckDB thread (valuebudget.go).
	valueBudget int64
	// held bounds the blocks holding a catalog transaction (ddltx.go,
	// sessionlimits.go); roles counts each role's sessions.
	held  *heldSlots
	roles roleSessions
	// commitQueues group contended read-modify-write commits
	// (groupcommit.go).
	commitQueues commitQueues
	// sessions lists the server's sessions (activity.go; nil: none known).
	sessions SessionRegistry
	// imports are the running CALL lakesoul.import (importprogress.go).
	imports importRegistry
	// listen is the server's LISTEN/NOTIFY (listen.go).
	listen *listen.Hub
	// results bounds the disk of result spills (spill.go).
	results resultSpace
	// ddlGen counts this server's changes of relation names and columns
	// (renames, ALTER TABLE, DROP; rename.go): a plan made at another
	// generation checks its tables before it runs (checkPlanTables).
	ddlGen atomic.Uint64
}

// New opens the engine: DuckDB with the lake scan function, on the given catalog.
func New(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	e := &Engine{cfg: cfg, cat: cfg.Catalog, store: cfg.Store, log: cfg.Logger, parsing: newParseBudget(cfg.MemoryLimit),
		valueBudget: valueBudgetFor(cfg.MemoryLimit, cfg.DuckDBThreads), held: newHeldSlots(cfg.Catalog.Pool().Config().MaxConns), listen: listen.New(cfg.Catalog.Pool(), cfg.Logger, listen.Limits{Queue: cfg.NotifyQueueLimit})}
	e.scans = newScanRegistry(cfg.Store)
	if cfg.TempDir == "" {
		dir, err := os.MkdirTemp("", "lakesoul-engine-*")
		if err != nil {
			return nil, fmt.Errorf("engine temp dir: %w", err)
		}
		e.ownTemp, cfg.TempDir, e.cfg.TempDir = dir, dir, dir
	}
	// Merges of units with more files than one merge reads at once spill
	// into the temp dir (reader.Scan.Spill); DuckDB into its own
	// subdirectory, which holds nothing else.
	e.scans.spill = cfg.TempDir
	duckTemp := filepath.Join(cfg.TempDir, "duckdb")
	if err := os.MkdirAll(duckTemp, 0o700); err != nil {
		e.removeOwnTemp()
		return nil, fmt.Errorf("engine temp dir: %w", err)
	}
	// Results that outlive their source (held cursors, parked streams)
	// spill there too, within the temp space limit (spill.go).
	e.results.dir, e.results.limit = e.scans.spill, cfg.TempLimit
	if err := duckstream.Available(); err != nil {
		// Without streaming, every result would be materialised in memory.
		e.removeOwnTemp()
		return nil, fmt.Errorf("DuckDB results cannot stream: %w", err)
	}
	e.snaps = newSnapshotCache()
	e.vectors = newVectorIndexes(cfg.Catalog, e)
	e.ivfs = newIVFCache(1 << 30)
	e.vrows = newVectorRowCache(vectorRowCacheBytes)
	db, funcs, err := openDuckDB(ctx, e.scans, cfg, duckTemp)
	if err != nil {
		e.removeOwnTemp()
		return nil, err
	}
	e.engineFuncs = funcs
	e.duck = db
	if err := e.cat.Pool().QueryRow(ctx, "SELECT current_setting('server_version'), current_user").Scan(&e.serverVersion, &e.catalogRole); err != nil {
		db.Close()
		return nil, fmt.Errorf("read catalog server version: %w", err)
	}
	if e.typeNames, err = loadTypeNames(ctx, e.cat.Pool()); err != nil { // pgtypeof.go
		db.Close()
		return nil, err
	}
	var vectorOID *uint32
	if err := e.cat.Pool().QueryRow(ctx, "SELECT to_regtype('vector')::oid").Scan(&vectorOID); err != nil {
		return nil, fmt.Errorf("read the catalog's vector type: %w", err)
	}
	if vectorOID != nil {
		schema.SetVectorOID(*vectorOID)
	}
	return e, nil
}

// Close releases DuckDB.
func (e *Engine) Close() error {
	e.listen.Close()
	e.vectors.close()
	e.scans.bulk.close()
	err := e.duck.Close()
	e.removeOwnTemp()
	return err
}

// removeOwnTemp removes the temp directory the engine made for itself.
func (e *Engine) removeOwnTemp() {
	if e.ownTemp != "" {
		_ = os.RemoveAll(e.ownTemp)
	}
}

// SCRAMVerifier implements pgwire.Authenticator: the stored verifier of a login
// role of the catalog database, so users authenticate as the PostgreSQL roles
// they are.
func (e *Engine) SCRAMVerifier(ctx context.Context, role string) (string, error) {
	verifier, found, err := e.cat.LoginVerifier(ctx, role)
	if err == nil && !found {
		return "", pgwire.ErrUnknownRole
	}
	return verifier, err
}

// Privileged implements pgwire.PrivilegedRoles: the connection slots kept
// for administrators go to superusers of the catalog and to the role the
// server's own catalog connections use (the admin).
func (e *Engine) Privileged(ctx context.Context, role string) (bool, error) {
	if role == e.catalogRole {
		return true, nil
	}
	super, _, err := e.cat.RoleFacts(ctx, role)
	return super, err
}

// sessionToken is a fresh random session token: the prefix of the session's
// scan handles and its key among the sessions sequence functions find.
func sessionToken() (string, error) {
	var tok [16]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(tok[:]), nil
}

// NewSession implements pgwire.SessionFactory.
func (e *Engine) NewSession(ctx context.Context, params map[string]string, cred pgwire.Credential) (pgwire.Session, error) {
	user := params["user"]
	db := params["database"]
	if db == "" {
		db = user
	}
	if db != DatabaseName {
		return nil, sqlerr.New(sqlerr.InvalidCatalogName, "database %q does not exist", db)
	}
	// is_superuser reports what the role is in the catalog, as PostgreSQL
	// does, not what the client claims.
	super, connLimit, err := e.cat.RoleFacts(ctx, user)
	if err != nil {
		return nil, err
	}
	// The role's sessions are bounded (sessionlimits.go).
	if err := e.roles.acquire(user, e.sessionLimit(user, super, connLimit)); err != nil {
		return nil, err
	}
	duck, err := e.duck.Conn(ctx)
	if err != nil {
		e.roles.release(user)
		return nil, fmt.Errorf("open duckdb connection: %w", err)
	}
	token, err := sessionToken()
	if err != nil {
		e.roles.release(user)
		duck.Close()
		return nil, err
	}
	s := &Session{
		e:         e,
		user:      user,
		superuser: super,
		cred:      catalog.Credential{Password: cred.Password, SCRAMClientKey: cred.SCRAMClientKey, SCRAMServerKey: cred.SCRAMServerKey},
		cat:       e.cat.As(user),
		token:     token,
		duck:      &duckConn{conn: duck},
		counted:   true,
	}
	s.settings = s.defaultSettings(params)
	if err := s.claimCatalogVersion(ctx, params); err != nil { // dumpversion.go
		e.roles.release(user)
		duck.Close()
		return nil, err
	}
	sequenceSessions.Store(s.token, s)
	return s, nil
}
