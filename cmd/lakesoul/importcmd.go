package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// importCmd runs CALL lakesoul.import on a server: the server reads the
// files (from where the role may read), so nothing streams through this
// process. On a terminal the server's progress NOTICEs show on a status
// line; the files imported are printed when it committed.
func importCmd(args []string) error {
	fs := flag.NewFlagSet("import", flag.ExitOnError)
	url := fs.String("url", env("LAKESOUL_URL", ""), "server to connect to, postgres://user:password@host:port/lakesoul (default: the PG* environment variables) [LAKESOUL_URL]")
	format := fs.String("format", "", "parquet or csv (default: from the location's extension)")
	header := fs.Bool("header", false, "CSV files start with a header line naming their columns")
	delimiter := fs.String("delimiter", "", "CSV field delimiter (default ,)")
	register := fs.Bool("register", false, "register Parquet files that lie in the table's directory as they are")
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: lakesoul import [flags] SCHEMA.TABLE LOCATION   (LOCATION: file:///… or s3://…, a file, a directory or a glob)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(reorderFlags(fs, args)); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return errors.New("import: want a table and a location")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := pgx.ParseConfig(*url)
	if err != nil {
		return fmt.Errorf("import: --url: %w", err)
	}
	status := newStatusLine("import " + fs.Arg(0))
	defer status.close()
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { status.set("%s", n.Message) }
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("import: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	call := []string{"$1", "$2"}
	params := []any{fs.Arg(0), fs.Arg(1)}
	for _, o := range []struct {
		name string
		set  bool
		v    any
	}{{"format", *format != "", *format}, {"header", *header, *header}, {"delimiter", *delimiter != "", *delimiter}, {"register", *register, *register}} {
		if o.set {
			params = append(params, o.v)
			call = append(call, fmt.Sprintf("%s => $%d", o.name, len(params)))
		}
	}
	status.set("connected; importing")
	rows, err := conn.Query(ctx, "CALL lakesoul.import("+strings.Join(call, ", ")+")", params...)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	type fileRow struct {
		file        string
		rows, bytes int64
	}
	var out []fileRow
	for rows.Next() {
		var r fileRow
		if err := rows.Scan(&r.file, &r.rows, &r.bytes); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	status.close()
	var total int64
	for _, r := range out {
		fmt.Printf("%s\t%d rows\t%d bytes\n", r.file, r.rows, r.bytes)
		total += r.rows
	}
	fmt.Printf("imported %d rows from %d files into %s\n", total, len(out), fs.Arg(0))
	return nil
}

// reorderFlags moves flags before positional arguments, so that
// `import s.t file:///x --format csv` parses as written. A flag of fs that
// is boolean (flag's IsBoolFlag) takes no separate value.
func reorderFlags(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") && a != "-" {
			flags = append(flags, a)
			name := strings.TrimLeft(strings.SplitN(a, "=", 2)[0], "-")
			if !strings.Contains(a, "=") && !isBoolFlag(fs, name) && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	return append(flags, pos...)
}

// isBoolFlag reports whether name is a boolean flag of fs.
func isBoolFlag(fs *flag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
