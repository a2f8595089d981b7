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

func (s connStatements) Add(name, query string, stmt Statement) bool {
	if name == "" {
		return false
	}
	if _, dup := s.c.stmts[name]; dup {
		return false
	}
	s.c.stmts[name] = &preparedStatement{name: name, query: query, stmt: stmt, paramOIDs: stmt.ParamOIDs()}
	return true
}

func (s connStatements) Lookup(name string) (Statement, bool) {
	ps, ok := s.c.stmts[name]
	if !ok || ps.stmt == nil {
		return nil, false
	}
	return ps.stmt, true
}
