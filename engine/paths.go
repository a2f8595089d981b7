package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Table directories. The rule is layout's (paths.go): a table's files live
// in <warehouse>/<namespace>/<table>/, names escaped. The engine applies it
// where table paths enter and leave:
//
//   - CREATE TABLE gives a table layout.TableDir of its names, or a fresh
//     sibling of it when another table uses that directory (a renamed table
//     keeps its old name's directory), and records the directory in the
//     catalog (catalog.CreateTable, lakesoul.table_dir);
//   - every use of a table (resolveTable: reads, writes, DML, COPY, time
//     travel, ALTER, CALL) first checks that the catalog's table_path is that
//     directory — the recorded one, which must be a table directory of the
//     table's namespace, or for a table without a record the directory of
//     its names (layout.CheckRecordedDir) — (42501 otherwise), because
//     users of a workspace can write catalog rows of their own domain
//     directly: a forged table_path, or a
//     forged table row named after another workspace's table, must not let
//     the server read or write another table's files. The catalog resolves a
//     name only to a table row carrying that same name, so the directory
//     checked is the one of the name the statement used;
//   - every snapshot is checked before DuckDB runs (reader.CheckFiles), and
//     the reader refuses on its own any file outside the table's directory
//     (reader/file.go), so a forged data_commit_info row cannot point into
//     another table;
//   - DROP TABLE, DROP SCHEMA … CASCADE and cleanup delete only inside the
//     dropped or cleaned table's directory, and the object store refuses a
//     prefix delete outside the namespace's directory on its own.
//
// 42501 rather than XX001 (data_corrupted): the server cannot tell a forged
// row from a damaged one, and what it decides is that the statement may not
// touch files outside the table — an authorization decision, which is also
// what the S3 proxy answers for such paths. Tables created by other LakeSoul
// clients under another root are refused in the same way; their catalog rows
// still drop (their files stay).

// checkTableDir refuses (42501) a table whose path is not its own directory
// in the warehouse.
func (e *Engine) checkTableDir(t *catalog.Table) error {
	if err := layout.CheckRecordedDir(t.Path, e.cfg.Warehouse, t.Namespace, t.Name, t.Dir); err != nil {
		return sqlerr.Wrap(sqlerr.InsufficientPrivilege, err,
			fmt.Sprintf("table %s is not stored in its own directory of the warehouse", t.QualifiedName()))
	}
	return nil
}

// newTableDir is the directory of a new table namespace.name.
func (e *Engine) newTableDir(namespace, name string) (string, error) {
	p, err := layout.TableDir(e.cfg.Warehouse, namespace, name)
	switch {
	case errors.Is(err, layout.ErrSegmentTooLong):
		return "", sqlerr.Wrap(sqlerr.NameTooLong, err, fmt.Sprintf("name of table %s.%s is too long for a directory", namespace, name))
	case err != nil:
		return "", sqlerr.Wrap(sqlerr.InvalidName, err, fmt.Sprintf("table %s.%s cannot be given a directory", namespace, name))
	}
	return p, nil
}

// removeTableDir deletes a dropped table's directory path, if it is a table
// directory of namespace ns in the warehouse (exactly one segment below the
// namespace's directory; for DROP TABLE the caller has also checked it is
// the dropped table's own, see checkTableDir). Anything else is left alone:
// the metadata is already gone, so a refusal or a failure only leaves
// unreferenced files behind; it is logged.
func (s *Session) removeTableDir(ctx context.Context, ns, path string) {
	nsDir, err := layout.NamespaceDir(s.e.cfg.Warehouse, ns)
	if err != nil || !layout.ChildOf(nsDir, path) {
		s.e.log.Warn("drop: table files are not in a table directory of the namespace; left in place",
			"namespace", ns, "path", path, "namespace_dir", nsDir)
		return
	}
	if err := s.e.store.DeletePrefix(context.WithoutCancel(ctx), nsDir, path); err != nil {
		s.e.log.Warn("drop: could not remove table files", "path", path, "err", err)
	}
}
