package cdc

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"vitess.io/vitess/go/mysql"
	"vitess.io/vitess/go/mysql/sqlerror"
	"vitess.io/vitess/go/sqltypes"

	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Connections to a MySQL/MariaDB source (vitess's client). A CONNECTION is
// mysql://user:password@host:port; the session runs in UTC, so TIMESTAMP
// values read in the copy are UTC as the binary log's are.

func mysqlParams(conn string) (*mysql.ConnParams, error) {
	u, err := url.Parse(conn)
	if err != nil || u.Scheme != "mysql" || u.Host == "" {
		return nil, sqlerr.New(sqlerr.SyntaxError, "invalid connection string: want mysql://user:password@host:port")
	}
	p := &mysql.ConnParams{Host: u.Hostname(), Port: 3306, ConnectTimeoutMs: 10000}
	if s := u.Port(); s != "" {
		if p.Port, err = strconv.Atoi(s); err != nil {
			return nil, sqlerr.New(sqlerr.SyntaxError, "invalid connection string: port %q", s)
		}
	}
	if u.User != nil {
		p.Uname = u.User.Username()
		p.Pass, _ = u.User.Password()
	}
	return p, nil
}

// connectMySQL opens a connection; failures are 08001, as for PostgreSQL
// sources.
func connectMySQL(ctx context.Context, conn string) (*mysql.Conn, error) {
	p, err := mysqlParams(conn)
	if err != nil {
		return nil, err
	}
	c, err := mysql.Connect(ctx, p)
	if err != nil {
		return nil, &sqlerr.Error{Code: sqlerr.UnableToConnect, Message: "could not connect to the MySQL source: " + mysqlMessage(err), Err: err}
	}
	if _, err := c.ExecuteFetch("SET time_zone = '+00:00'", 0, false); err != nil {
		c.Close()
		return nil, mysqlError("set the session time zone", err)
	}
	return c, nil
}

func mysqlMessage(err error) string {
	var se *sqlerror.SQLError
	if errors.As(err, &se) {
		return se.Message
	}
	return err.Error()
}

// mysqlError is a source statement's failure: access denied is 42501,
// a lost connection 08006, anything else XX000 with the source's text.
func mysqlError(what string, err error) error {
	if err == nil {
		return nil
	}
	var se *sqlerr.Error
	if errors.As(err, &se) {
		return err
	}
	var me *sqlerror.SQLError
	if errors.As(err, &me) {
		code := sqlerr.InternalError
		switch me.Number() {
		case sqlerror.ERSpecifiedAccessDenied, sqlerror.ERAccessDeniedError, sqlerror.ERDBAccessDenied, sqlerror.ERTableAccessDenied:
			code = sqlerr.InsufficientPrivilege
		case sqlerror.CRServerGone, sqlerror.CRServerLost, sqlerror.CRConnectionError, sqlerror.CRConnHostError:
			code = sqlerr.ConnectionFailure
		}
		return &sqlerr.Error{Code: code, Message: fmt.Sprintf("MySQL source: %s: %s", what, me.Message), Err: err}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, new(*safego.PanicError)) {
		return err // not the source's failure: a panic stays an internal error
	}
	return &sqlerr.Error{Code: sqlerr.ConnectionFailure, Message: fmt.Sprintf("MySQL source: %s: %v", what, err), Err: err}
}

// mysqlQuery runs a query and returns its rows.
func mysqlQuery(c *mysql.Conn, what, q string) ([][]sqltypes.Value, error) {
	r, err := c.ExecuteFetch(q, 1<<20, false)
	if err != nil {
		return nil, mysqlError(what, err)
	}
	return r.Rows, nil
}

// mysqlLiteral quotes a string for MySQL.
func mysqlLiteral(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\0`, "\n", `\n`, "\r", `\r`, "\x1a", `\Z`)
	return "'" + r.Replace(s) + "'"
}

// mysqlIdent quotes an identifier for MySQL.
func mysqlIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func mysqlList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = mysqlLiteral(n)
	}
	return strings.Join(q, ", ")
}
