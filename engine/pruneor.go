package engine

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/reader"
)

// ORs filter too. A row passes `A OR B OR C` only when some branch holds,
// so a column that every branch constrains must satisfy one of those
// constraints: TPC-H Q19's three branches each say `l_shipmode IN ('AIR',
// 'AIR REG') AND l_shipinstruct = 'DELIVER IN PERSON'` and bound
// l_quantity, so the scan of lineitem keeps only those modes, that
// instruction and quantities from the lowest lower bound to the highest
// upper one — as DuckDB and PostgreSQL factor such terms out of ORs. The
// term is the hull (opAny): the union of the branches' points when every
// branch pins points, else the weakest bounds. It is implied by the OR,
// never equal to it, so the statement is never exact (direct scans stay
// off) and DuckDB applies the OR itself. A branch's terms that say nothing
// exact (a parameter of another type, `<>`) leave it less constrained,
// never more: the hull only grows.

// orTerms reads an OR of branches as the hull terms on the columns every
// branch constrains (col resolves columns as for termOf); ok is false when
// there is none.
func orTerms(branches []*pg_query.Node, col func(*pg_query.Node) string) (terms []pruneTerm, implied, ok bool) {
	var cols []string
	per := make([]map[string][]pruneTerm, len(branches))
	for i, br := range branches {
		per[i] = map[string][]pruneTerm{}
		for _, c := range splitAnd(br) {
			ts, _, ok := termOf(c, col)
			if !ok {
				continue
			}
			for _, t := range ts {
				if i == 0 && len(per[0][t.col]) == 0 {
					cols = append(cols, t.col)
				}
				per[i][t.col] = append(per[i][t.col], t)
			}
		}
	}
	for _, c := range cols {
		alts := make([][]pruneTerm, len(per))
		for i, m := range per {
			alts[i] = m[c]
		}
		if !slices.ContainsFunc(alts, func(a []pruneTerm) bool { return len(a) == 0 }) {
			terms = append(terms, pruneTerm{col: c, op: opAny, alts: alts})
		}
	}
	return terms, true, len(terms) > 0
}

// orHull is an opAny term resolved: the values of the union of its
// branches (pinned), or its weakest bounds; none when no branch can match.
type orHull struct {
	none   bool
	pinned bool
	points []any
	lo, hi reader.Cond // Lower / Upper halves; nil: unbounded
}

// resolveAny resolves an opAny term on a column of type dt; nil when the
// hull is everything (some branch leaves the column unconstrained, or the
// branches' bounds point both ways). Errors
// of constants in any branch are PostgreSQL's, as for other terms.
func resolveAny(term pruneTerm, dt arrow.DataType, params []any) (*orHull, error) {
	open := false
	var alts []*colConstraint
	for _, alt := range term.alts {
		c := &colConstraint{dt: dt}
		constrained := false
		for _, t := range alt {
			if t.op == opAny {
				h, err := resolveAny(t, dt, params)
				if err != nil {
					return nil, err
				}
				if h != nil {
					h.applyTo(c)
					constrained = true
				}
				continue
			}
			op, vals, usable, err := termValues(t, dt, params)
			if err != nil {
				return nil, err
			}
			if !usable || op == opNe {
				continue
			}
			if op == opEq {
				c.addPoints(vals)
			} else {
				c.addBound(op, vals[0])
			}
			constrained = true
		}
		open = open || !constrained
		alts = append(alts, c)
	}
	if open {
		return nil, nil
	}
	h := &orHull{none: true, pinned: true}
	for _, c := range alts {
		if c.pinned {
			var pts []any
			for _, v := range c.points {
				if c.allows(v) {
					pts = append(pts, v)
				}
			}
			if len(pts) == 0 {
				continue // this branch matches no row
			}
			slices.SortFunc(pts, compareNorm)
			c.lo = reader.Cond{Lower: pts[0], LowerInclusive: true}
			c.hi = reader.Cond{Upper: pts[len(pts)-1], UpperInclusive: true}
			for _, v := range pts {
				if !slices.ContainsFunc(h.points, func(w any) bool { return compareNorm(v, w) == 0 }) {
					h.points = append(h.points, v)
				}
			}
		} else {
			h.pinned = false
		}
		// The weakest bounds so far: unbounded wins, then the lower
		// (higher) value, then inclusion.
		lo, loIncl := c.lo.Lower, c.lo.LowerInclusive
		hi, hiIncl := c.hi.Upper, c.hi.UpperInclusive
		if h.none {
			h.lo = reader.Cond{Lower: lo, LowerInclusive: loIncl}
			h.hi = reader.Cond{Upper: hi, UpperInclusive: hiIncl}
			h.none = false
			continue
		}
		if h.lo.Lower != nil {
			if lo == nil {
				h.lo.Lower = nil
			} else if d := compareNorm(lo, h.lo.Lower); d < 0 || (d == 0 && loIncl) {
				h.lo = reader.Cond{Lower: lo, LowerInclusive: loIncl}
			}
		}
		if h.hi.Upper != nil {
			if hi == nil {
				h.hi.Upper = nil
			} else if d := compareNorm(hi, h.hi.Upper); d > 0 || (d == 0 && hiIncl) {
				h.hi = reader.Cond{Upper: hi, UpperInclusive: hiIncl}
			}
		}
	}
	if !h.none && !h.pinned && h.lo.Lower == nil && h.hi.Upper == nil {
		return nil, nil // unbounded both ways
	}
	return h, nil
}

// applyTo narrows c by the hull.
func (h *orHull) applyTo(c *colConstraint) {
	switch {
	case h.none:
		c.addPoints(nil)
	case h.pinned:
		c.addPoints(h.points)
	default:
		if h.lo.Lower != nil {
			op := opGt
			if h.lo.LowerInclusive {
				op = opGe
			}
			c.addBound(op, h.lo.Lower)
		}
		if h.hi.Upper != nil {
			op := opLt
			if h.hi.UpperInclusive {
				op = opLe
			}
			c.addBound(op, h.hi.Upper)
		}
	}
}
