package pgcatalog
import ("testing";"os")
func TestScratch(t *testing.T) {
	b, _ := os.ReadFile(os.Getenv("Q"))
	out, err := RewriteSQL(string(b))
	if err != nil { t.Fatal(err) }
	os.WriteFile("/tmp/rewritten.sql", []byte(out+";\n"), 0644)
}
