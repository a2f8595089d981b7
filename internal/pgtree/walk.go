// Package pgtree walks pg_query parse trees.
package pgtree

import "google.golang.org/protobuf/reflect/protoreflect"

// Walk calls visit on m and then on every message reachable from it,
// parents before children, children in field order. visit may change the
// fields of the message it is given, replacing a oneof's value included:
// the walk reads them after visit returns and descends into what is there
// then. Walk keeps its own stack instead of recursing, so a deep tree costs
// heap, not goroutine stack.
func Walk(m protoreflect.Message, visit func(protoreflect.Message)) {
	stack := []protoreflect.Message{m}
	var children []protoreflect.Message
	for len(stack) > 0 {
		m := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		visit(m)
		children = children[:0]
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.Message() == nil, fd.IsMap():
			case fd.IsList():
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					children = append(children, l.Get(i).Message())
				}
			default:
				children = append(children, v.Message())
			}
			return true
		})
		for i := len(children) - 1; i >= 0; i-- {
			stack = append(stack, children[i])
		}
	}
}
