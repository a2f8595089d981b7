package engine

import (
	"context"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Transaction characteristics: isolation level and access mode.
//
// The session reports what the client asked for, as PostgreSQL does:
// transaction_isolation and transaction_read_only are the open block's (BEGIN
// … ISOLATION LEVEL / READ ONLY, SET TRANSACTION), else the defaults
// (default_transaction_isolation and default_transaction_read_only, set by SET
// or SET SESSION CHARACTERISTICS AS TRANSACTION; PostgreSQL's defaults read
// committed and off).
//
// READ ONLY is enforced: a statement that writes (routes.go) fails with 25006.
// The isolation levels are PostgreSQL's: under READ COMMITTED each statement
// reads the newest committed snapshot (and, in a block, the block's own
// writes), and a read-modify-write statement whose rows changed under it runs
// again (rmw.go); REPEATABLE READ and SERIALIZABLE blocks read one snapshot
// (txsnapshot.go) and fail with 40001 instead; SERIALIZABLE also refuses a
// commit whose reads changed (serializable.go). READ UNCOMMITTED is READ
// COMMITTED, as in PostgreSQL.

// isolationLevels are the levels PostgreSQL accepts, as SHOW spells them.
var isolationLevels = map[string]bool{"serializable": true, "repeatable read": true, "read committed": true, "read uncommitted": true}

// txOption is one characteristic of BEGIN / SET TRANSACTION: the setting it
// sets and its value as SHOW reports it.
type txOption struct{ name, value string }

// txOptions reads the characteristics of BEGIN, START TRANSACTION, SET
// TRANSACTION and SET SESSION CHARACTERISTICS (DEFERRABLE, meaningless here,
// is accepted and ignored).
func txOptions(opts []*pg_query.Node) ([]txOption, error) {
	var out []txOption
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		c := d.Arg.GetAConst()
		switch d.Defname {
		case "transaction_isolation":
			level := strings.ToLower(c.GetSval().GetSval())
			if !isolationLevels[level] {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"transaction_isolation\": %q", level)
			}
			out = append(out, txOption{"transaction_isolation", level})
		case "transaction_read_only":
			out = append(out, txOption{"transaction_read_only", boolSetting(c.GetIval().GetIval() != 0)})
		case "transaction_deferrable":
		default:
			return nil, sqlerr.Unsupported("transaction option "+d.Defname, "ISOLATION LEVEL, READ ONLY, READ WRITE")
		}
	}
	return out, nil
}

// setTx records a characteristic of the current transaction.
func (s *Session) setTx(name, value string) {
	s.settings[name] = setting{name: name, value: value}
}

// resetTx gives the current transaction the default characteristics: at
// the end of a block, and when the defaults change outside one.
func (s *Session) resetTx() {
	s.setTx("transaction_isolation", s.settings["default_transaction_isolation"].value)
	s.setTx("transaction_read_only", s.settings["default_transaction_read_only"].value)
}

// beginTx opens a transaction block with the given characteristics.
func (s *Session) beginTx(opts []txOption) {
	s.inBlock = true
	s.queriedInBlock = false
	s.resetTx()
	for _, o := range opts {
		s.setTx(o.name, o.value)
	}
}

// checkTxChange refuses what PostgreSQL refuses once the block has run a
// query: another isolation level, or going from read-only to read-write.
func (s *Session) checkTxChange(o txOption) error {
	if !s.queriedInBlock {
		return nil
	}
	switch {
	case o.name == "transaction_isolation" && o.value != s.settings["transaction_isolation"].value:
		return sqlerr.New(sqlerr.ActiveSQLTransaction, "SET TRANSACTION ISOLATION LEVEL must be called before any query")
	case o.name == "transaction_read_only" && o.value == "off" && s.readOnlyTx():
		return sqlerr.New(sqlerr.ActiveSQLTransaction, "transaction read-write mode must be set before any query")
	}
	return nil
}

// queryTags are the statements after which a block's characteristics are
// fixed (PostgreSQL: those that take a snapshot).
var queryTags = []string{"SELECT", "INSERT", "UPDATE", "DELETE", "MERGE", "COPY", "FETCH", "MOVE", "DECLARE CURSOR", "TRUNCATE", "EXPLAIN"}

// noteQuery records that the block ran a query (statement tag tag).
func (s *Session) noteQuery(tag string) {
	if s.inBlock && !s.queriedInBlock && slices.ContainsFunc(queryTags, func(q string) bool { return strings.HasPrefix(tag, q) }) {
		s.queriedInBlock = true
	}
}

// readOnlyTx reports whether the current transaction is READ ONLY.
func (s *Session) readOnlyTx() bool { return s.settings["transaction_read_only"].value == "on" }

// checkWritable refuses a statement that writes in a read-only transaction.
func (s *Session) checkWritable(tag string) error {
	if s.readOnlyTx() {
		return sqlerr.New(sqlerr.ReadOnlySQLTransaction, "cannot execute %s in a read-only transaction", tag)
	}
	return nil
}

// planSetTransaction plans SET TRANSACTION … (the open block's
// characteristics; outside a block it has no effect but a WARNING, as in
// PostgreSQL)
// and SET SESSION CHARACTERISTICS AS TRANSACTION … (the defaults).
func (s *Session) planSetTransaction(n *pg_query.VariableSetStmt) (pgwire.Statement, error) {
	opts, err := txOptions(n.Args)
	if err != nil {
		return nil, err
	}
	session := strings.EqualFold(n.Name, "session characteristics")
	return &funcStmt{tag: "SET", run: func(ctx context.Context, _ []any) (string, [][]any, error) {
		if !session && !s.warnNoTransactionBlock(ctx, "SET TRANSACTION") {
			return "SET", nil, nil
		}
		for _, o := range opts {
			if session {
				s.assignSetting(ctx, "default_"+o.name, setting{name: "default_" + o.name, value: o.value}, false)
				if !s.inBlock {
					s.resetTx()
				}
				continue
			}
			if err := s.checkTxChange(o); err != nil {
				return "", nil, err
			}
			s.setTx(o.name, o.value)
		}
		return "SET", nil, nil
	}}, nil
}
