package pgcluster

import (
	"strconv"
	"strings"
)

// ConnString returns a keyword/value connection string for database dbname
// as the superuser over the unix socket, e.g.
//
//	host=/var/lib/lakesoul/pg port=41234 user=lakesoul dbname=catalog sslmode=disable
//
// pgx and libpq accept it. It stays valid across restarts of the data dir.
func (c *Cluster) ConnString(dbname string) string {
	return strings.Join([]string{
		"host=" + quoteConnValue(c.socketDir),
		"port=" + strconv.Itoa(c.opts.Port),
		"user=" + quoteConnValue(c.opts.SuperUser),
		"dbname=" + quoteConnValue(dbname),
		"sslmode=disable",
	}, " ")
}

// quoteConnValue quotes v for a keyword/value connection string when it is
// empty or holds spaces, quotes or backslashes.
func quoteConnValue(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\n\r\v\f'\\") {
		return v
	}
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'" + r.Replace(v) + "'"
}
