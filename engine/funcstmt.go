package engine

import (
	"context"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// funcStmt is a statement whose whole effect is one Go function call that
// returns a tag and a small, fully materialised result (DDL, SET, SHOW, INSERT).
// It runs when its portal is first executed, never at Describe.
type funcStmt struct {
	tag    string
	cols   []pgwire.Column
	params []uint32
	run    func(ctx context.Context, params []any) (tag string, rows [][]any, err error)
}

func (f *funcStmt) ParamOIDs() []uint32                               { return f.params }
func (f *funcStmt) Describe(context.Context) ([]pgwire.Column, error) { return f.cols, nil }
func (f *funcStmt) Tag() string                                       { return f.tag }

func (f *funcStmt) Bind(_ context.Context, params []any) (pgwire.Portal, error) {
	if len(params) != len(f.params) {
		return nil, sqlerr.New(sqlerr.ProtocolViolation, "bind message supplies %d parameters, but prepared statement requires %d", len(params), len(f.params))
	}
	return &funcPortal{stmt: f, params: params}, nil
}

type funcPortal struct {
	stmt   *funcStmt
	params []any
	ran    bool
	tag    string
	rows   [][]any
	next   int
}

func (p *funcPortal) Describe(context.Context) ([]pgwire.Column, error) { return p.stmt.cols, nil }

func (p *funcPortal) Execute(ctx context.Context, maxRows int, w pgwire.RowWriter) (string, bool, error) {
	if !p.ran {
		tag, rows, err := p.stmt.run(ctx, p.params)
		if err != nil {
			return "", true, err
		}
		p.ran, p.tag, p.rows = true, tag, rows
	}
	for n := 0; p.next < len(p.rows); n++ {
		if maxRows > 0 && n == maxRows {
			return "", false, nil
		}
		if err := w.WriteRow(p.rows[p.next]); err != nil {
			return "", true, err
		}
		p.next++
	}
	return p.tag, true, nil
}

func (p *funcPortal) Close() {}
