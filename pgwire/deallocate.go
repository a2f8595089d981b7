package pgwire

// connStatements gives a Session the connection's prepared statements
// (PreparedStatements).
type connStatements struct{ c *conn }

func (s connStatements) Deallocate(name string) bool {
	if name == "" {
		return false
	}
	if _, ok := s.c.stmts[name]; !ok {
		return false
	}
	delete(s.c.stmts, name)
	return true
}

func (s connStatements) DeallocateAll() {
	for name := range s.c.stmts {
		if name != "" {
			delete(s.c.stmts, name)
		}
	}
}
