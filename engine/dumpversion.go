package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// dumpClients are the application names of PostgreSQL's dump tools. Each
// refuses a server newer than itself, and picks the catalog queries it sends
// by the server's version; the pg_catalog emulation has the catalog
// PostgreSQL's columns (the views are over its real catalogs). So a session
// of one of them is told the catalog's own version rather than the one the
// server claims to other clients (ServerVersion). libpq sends the tool's name
// as application_name unless the user sets another (PGAPPNAME).
var dumpClients = map[string]bool{"pg_dump": true, "pg_dumpall": true}

// claimCatalogVersion makes a dump tool's session report the catalog
// PostgreSQL's server_version and server_version_num.
func (s *Session) claimCatalogVersion(ctx context.Context, params map[string]string) error {
	if !dumpClients[params["application_name"]] {
		return nil
	}
	conn, err := s.e.cat.Pool().Acquire(ctx)
	if err != nil {
		return fmt.Errorf("catalog version: %w", err)
	}
	v := conn.Conn().PgConn().ParameterStatus("server_version")
	conn.Release()
	num, err := versionNum(v)
	if err != nil {
		return fmt.Errorf("catalog version %q: %w", v, err)
	}
	s.claimed = [2]string{strings.SplitN(v, " ", 2)[0], num}
	s.settings = s.defaultSettings(params)
	return nil
}

// versionNum turns a server_version ("15.18", "16.4 (Debian …)",
// "17devel") into server_version_num's form (150018).
func versionNum(v string) (string, error) {
	v = strings.SplitN(v, " ", 2)[0]
	parts := strings.SplitN(v, ".", 3)
	major, err := strconv.Atoi(strings.TrimRightFunc(parts[0], func(r rune) bool { return r < '0' || r > '9' }))
	if err != nil {
		return "", err
	}
	minor := 0
	if len(parts) > 1 {
		if minor, err = strconv.Atoi(parts[1]); err != nil {
			minor = 0
		}
	}
	return strconv.Itoa(major*10000 + minor), nil
}
