package pgwire

import (
	"runtime/debug"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// preparedStatement is the result of a Parse message (or of one statement of
// a simple query).
type preparedStatement struct {
	name  string
	query string
	// stmt is nil for an empty query, which executes to EmptyQueryResponse.
	stmt Statement
	// paramOIDs are stmt.ParamOIDs() as of Parse, or the client's declared
	// types for an empty query.
	paramOIDs []uint32
}

// portal is the result of a Bind message.
//
// Invariant: p.Close is called exactly once, when the portal leaves
// conn.portals (Close message, replacement of the unnamed portal, end of the
// transaction, end of the connection).
type portal struct {
	name string
	// query is the text of the statement it binds (pg_stat_activity).
	query string
	// p is nil for a portal of an empty query.
	p Portal
	// cols are the result columns (nil = NoData) and formats their wire
	// formats, one per column.
	cols    []Column
	formats []int16
}

// closePortal removes the named portal, if any, and closes it.
func (c *conn) closePortal(name string) {
	pt, ok := c.portals[name]
	if !ok {
		return
	}
	delete(c.portals, name)
	c.releasePortal(pt)
}

// closeAllPortals closes every portal: PostgreSQL drops portals when the
// transaction that created them ends.
func (c *conn) closeAllPortals() {
	for name := range c.portals {
		c.closePortal(name)
	}
}

// releasePortal calls pt.p.Close, logging instead of propagating a panic so
// that one bad portal cannot leak the others.
func (c *conn) releasePortal(pt *portal) {
	if pt.p == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("pgwire: panic closing portal", "portal", pt.name, "panic", r, "stack", string(debug.Stack()))
		}
	}()
	pt.p.Close()
}

// formatCodes expands the format codes of a Bind message to one per value:
// none means all text, one applies to all, otherwise there must be exactly n.
// what names the values for the error message ("parameter", "result").
func formatCodes(codes []int16, n int, what string) ([]int16, error) {
	out := make([]int16, n)
	switch len(codes) {
	case 0:
	case 1:
		for i := range out {
			out[i] = codes[0]
		}
	case n:
		copy(out, codes)
	default:
		if what == "result" {
			return nil, protocolViolation("bind message has %d result formats but query has %d columns", len(codes), n)
		}
		return nil, protocolViolation("bind message has %d parameter formats but %d parameters", len(codes), n)
	}
	for _, f := range out {
		if f != pgproto3.TextFormat && f != pgproto3.BinaryFormat {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unsupported format code: %d", f)
		}
	}
	return out, nil
}
