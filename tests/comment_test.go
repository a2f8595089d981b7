package tests

import (
	"strings"
	"testing"
)

// TestPsqlComments: psql's \dt+ shows a lake table's COMMENT ON TABLE and
// \d+ its column comments.
func TestPsqlComments(t *testing.T) {
	t.Parallel()
	p := &psqlClient{t: t, path: psqlPath(t), srv: sharedServer(t)}
	ctx := testCtx(t)
	p.exec(ctx, "CREATE SCHEMA surf_cm", "CREATE TABLE surf_cm.t (id int PRIMARY KEY, v text)",
		"COMMENT ON TABLE surf_cm.t IS 'order table'", "COMMENT ON COLUMN surf_cm.t.v IS 'free text'")
	if out := p.exec(ctx, `\dt+ surf_cm.*`); !strings.HasSuffix(strings.TrimSpace(out), "|order table") {
		t.Fatalf(`\dt+ does not show the comment: %q`, out)
	}
	out := p.exec(ctx, `\d+ surf_cm.t`)
	if !strings.Contains(out, "\nv|text|") || !strings.HasSuffix(strings.Split(out[strings.Index(out, "\nv|text|")+1:], "\n")[0], "|free text") {
		t.Fatalf(`\d+ does not show the column comment: %q`, out)
	}
	p.exec(ctx, "COMMENT ON TABLE surf_cm.t IS NULL")
	if out := p.exec(ctx, `\dt+ surf_cm.*`); strings.Contains(out, "order table") {
		t.Fatalf(`\dt+ after IS NULL: %q`, out)
	}
}
