package pgcatalog

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/lakesoul-go/lakesoul/internal/pgtree"
)

// walk calls visit on m and then on every message reachable from it, parents
// before children (pgtree.Walk: no recursion). visit may change the fields of
// the message it is given (they are read after it returns) but not replace
// the message itself.
func walk(m protoreflect.Message, visit func(any)) {
	pgtree.Walk(m, func(m protoreflect.Message) { visit(m.Interface()) })
}

// walkNode is walk over one parse-tree node; a nil node is skipped.
func walkNode(n *pg_query.Node, visit func(any)) {
	if n != nil {
		walk(n.ProtoReflect(), visit)
	}
}

// strs returns the values of a list of String nodes, or ok=false when an
// element is something else (A_Star, …).
func strs(nodes []*pg_query.Node) (out []string, ok bool) {
	out = make([]string, len(nodes))
	for i, n := range nodes {
		s := n.GetString_()
		if s == nil {
			return nil, false
		}
		out[i] = s.Sval
	}
	return out, true
}
