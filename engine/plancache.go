package engine

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
)

// Plans of queries a session runs again. Clients that do not prepare
// statements (psql, pgbench's simple protocol, drivers in simple mode) send
// the same text again and again; planning it — parsing, binding the lake
// tables, DuckDB's prepare and describe — costs more than a keyed lookup
// itself. A session keeps the plans of its last planCacheSize
// single-statement queries over lake tables, by text and declared parameter
// types. A plan is reused only when every table name it resolved resolves
// again — as the session's role, through its current search path — to a
// table with the same id and metadata: DDL, a table dropped and created
// again or a lost privilege make the query planned again, so a reused plan
// is never stale. SET and RESET drop the session's plans. Statements that
// pin a snapshot at planning (time travel) are not kept.

// planCacheSize bounds a session's kept plans.
const planCacheSize = 64

// planKey identifies a query text with its declared parameter types.
type planKey struct {
	text, params string
}

func newPlanKey(text string, paramOIDs []uint32) planKey {
	var b strings.Builder
	for _, o := range paramOIDs {
		b.WriteString(strconv.FormatUint(uint64(o), 10))
		b.WriteByte(',')
	}
	return planKey{text: text, params: b.String()}
}

// tableRef is one table name a plan resolved and the table it found.
type tableRef struct {
	schema, name string
	t            *catalog.Table
}

type cachedPlan struct {
	q    *duckQuery
	refs []tableRef
	// lit is set for a plan kept by token shape (literalplan.go).
	lit *literalPlan
}

// planCache is a session's kept plans, oldest first out; literals counts
// those kept by token shape.
type planCache struct {
	m        map[planKey]*cachedPlan
	order    []planKey
	literals int
}

func (c *planCache) clear() {
	c.m, c.order, c.literals = nil, nil, 0
}

func (c *planCache) put(k planKey, p *cachedPlan) {
	if c.m == nil {
		c.m = map[planKey]*cachedPlan{}
	}
	if _, ok := c.m[k]; !ok {
		c.order = append(c.order, k)
		if k.params == literalKey {
			c.literals++
		}
	}
	c.m[k] = p
	for len(c.order) > planCacheSize {
		c.remove(c.order[0])
		c.order = c.order[1:]
	}
}

func (c *planCache) drop(k planKey) {
	c.remove(k)
	c.order = slices.DeleteFunc(c.order, func(o planKey) bool { return o == k })
}

// remove deletes k's plan, not its place in order.
func (c *planCache) remove(k planKey) {
	if _, ok := c.m[k]; ok && k.params == literalKey {
		c.literals--
	}
	delete(c.m, k)
}

// planCacheable reports whether a parsed statement's plan may be kept: a
// SELECT over lake tables only, without time travel.
func planCacheable(stmt *pg_query.Node) bool {
	if sel := stmt.GetSelectStmt(); sel == nil || sel.IntoClause != nil {
		return false
	}
	k := classifyRelations(stmt)
	return len(k.lake) > 0 && k.catalog == 0 && k.timeTravel == 0
}

// cachedPlanFor returns the kept plan of k when its tables still resolve
// to what it was planned with; nil to plan afresh.
func (s *Session) cachedPlanFor(ctx context.Context, k planKey) *duckQuery {
	p, ok := s.plans.m[k]
	if !ok {
		return nil
	}
	for _, r := range p.refs {
		t, err := s.resolveTable(ctx, r.schema, r.name)
		if err != nil || !sameTable(r.t, t) {
			s.plans.drop(k)
			return nil
		}
	}
	return p.q
}

// sameTable reports whether two reads of a table's catalog row describe the
// same table: whatever a plan took from it is equal.
func sameTable(a, b *catalog.Table) bool {
	return a.ID == b.ID && a.Namespace == b.Namespace && a.Name == b.Name && a.Path == b.Path && a.Dir == b.Dir && a.OID == b.OID &&
		a.HashBucketNum == b.HashBucketNum && a.Domain == b.Domain && slices.Equal(a.PKCols, b.PKCols) &&
		slices.Equal(a.RangeCols, b.RangeCols) && maps.Equal(a.Properties, b.Properties) && schemasEqual(a.Schema, b.Schema) &&
		slices.Equal(a.IndexedCols, b.IndexedCols) && maps.EqualFunc(a.Enums, b.Enums, func(x, y *catalog.Enum) bool {
		return x.Namespace == y.Namespace && x.Name == y.Name && slices.Equal(x.Labels, y.Labels) && maps.Equal(x.Former, y.Former)
	})
}

func schemasEqual(a, b *arrow.Schema) bool {
	return a.Equal(b) && slices.EqualFunc(a.Fields(), b.Fields(), func(x, y arrow.Field) bool { return x.Nullable == y.Nullable })
}
