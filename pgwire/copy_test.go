package pgwire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// readAllRows decodes data in format f; NULL is shown as <NULL>.
func readAllRows(t *testing.T, data string, f CopyFormat) ([]string, error) {
	t.Helper()
	r := newCopyRowReader(strings.NewReader(data), f)
	var out []string
	for {
		row, err := r.ReadRow()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		cells := make([]string, len(row))
		for i, v := range row {
			if v == nil {
				cells[i] = "<NULL>"
			} else {
				cells[i] = string(v)
			}
		}
		out = append(out, strings.Join(cells, "|"))
	}
}

func TestCopyTextDecoding(t *testing.T) {
	f := CopyFormat{Kind: CopyText}.WithDefaults(false)
	got, err := readAllRows(t, "1\ta\\tb\\nc\t\\N\n2\t\\\\N\t\\x41\\101\n\n3\t\t\r\n\\.\nignored\n", f)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1|a\tb\nc|<NULL>", "2|\\N|AA", "", "3||"}
	if strings.Join(got, "/") != strings.Join(want, "/") {
		t.Errorf("got %q, want %q", got, want)
	}
	// A custom delimiter and NULL marker; an escaped delimiter is data.
	f = CopyFormat{Kind: CopyText, Delimiter: '|', Null: "NULL"}.WithDefaults(true)
	got, _ = readAllRows(t, "a\\|b|NULL|c\n", f)
	if strings.Join(got, "/") != "a|b|<NULL>|c" {
		t.Errorf("custom delimiter: %q", got)
	}
	// Lines without a backslash take the fast split: the NULL marker, empty
	// fields and an empty NULL marker still decode the same.
	got, _ = readAllRows(t, "x|NULL||y\n|NULL\nNULL\n", f)
	if strings.Join(got, "/") != "x|<NULL>||y/|<NULL>/<NULL>" {
		t.Errorf("fast split: %q", got)
	}
	f = CopyFormat{Kind: CopyText, Null: ""}.WithDefaults(true)
	got, _ = readAllRows(t, "a\t\tb\n\t\n", f)
	if strings.Join(got, "/") != "a|<NULL>|b/<NULL>|<NULL>" {
		t.Errorf("empty NULL marker: %q", got)
	}
	// No final newline; header skipped.
	f = CopyFormat{Kind: CopyText, Header: true}.WithDefaults(false)
	got, _ = readAllRows(t, "id\tv\n1\tx", f)
	if strings.Join(got, "/") != "1|x" {
		t.Errorf("header/no newline: %q", got)
	}
}

func TestCopyCSVDecoding(t *testing.T) {
	f := CopyFormat{Kind: CopyCSV}.WithDefaults(false)
	got, err := readAllRows(t, "1,\"a,b\",\n2,\"\",x\n3,\"multi\r\nline \"\"q\"\"\",y\r\n", f)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1|a,b|<NULL>", "2||x", "3|multi\r\nline \"q\"|y"}
	if strings.Join(got, "/") != strings.Join(want, "/") {
		t.Errorf("got %q, want %q", got, want)
	}
	// Escape distinct from quote.
	f = CopyFormat{Kind: CopyCSV, Escape: '\\'}.WithDefaults(false)
	got, _ = readAllRows(t, `"a\"b\\c",d`+"\n", f)
	if strings.Join(got, "/") != `a"b\c|d` {
		t.Errorf("escape: %q", got)
	}
	// A long line (beyond the read buffer) survives.
	long := strings.Repeat("x", 600<<10)
	got, err = readAllRows(t, "1,"+long+"\n2,\""+long+"\n"+long+"\"\n", CopyFormat{Kind: CopyCSV}.WithDefaults(false))
	if err != nil || len(got) != 2 || got[0] != "1|"+long || got[1] != "2|"+long+"\n"+long {
		t.Errorf("long lines: %v, %d rows", err, len(got))
	}
	_, err = readAllRows(t, "1,\"open\n", f)
	if sqlerr.Code(err) != codeBadCopyFileFormat {
		t.Errorf("unterminated quote: %v", err)
	}
}

func TestCopyBinaryDecoding(t *testing.T) {
	var b bytes.Buffer
	b.Write(binaryCopySignature)
	b.Write([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	tuple := func(fields ...[]byte) {
		binary.Write(&b, binary.BigEndian, int16(len(fields)))
		for _, f := range fields {
			if f == nil {
				binary.Write(&b, binary.BigEndian, int32(-1))
				continue
			}
			binary.Write(&b, binary.BigEndian, int32(len(f)))
			b.Write(f)
		}
	}
	tuple([]byte("ab"), nil, []byte{})
	tuple([]byte{1, 2, 3, 4})
	binary.Write(&b, binary.BigEndian, int16(-1))
	got, err := readAllRows(t, b.String(), CopyFormat{Kind: CopyBinary})
	if err != nil || strings.Join(got, "/") != "ab|<NULL>|/\x01\x02\x03\x04" {
		t.Errorf("got %q, %v", got, err)
	}
	for _, bad := range []string{"PGCOPY\n", "not a copy file at all", b.String()[:len(b.String())-5]} {
		_, err := readAllRows(t, bad, CopyFormat{Kind: CopyBinary})
		if sqlerr.Code(err) != codeBadCopyFileFormat {
			t.Errorf("%q: %v, want 22P04", bad, err)
		}
	}
}

// A failing source (CopyFail, lost connection) passes its error through.
func TestCopyReaderSourceError(t *testing.T) {
	boom := errors.New("boom")
	r := newCopyRowReader(io.MultiReader(strings.NewReader("1\tx\n"), errReader{boom}), CopyFormat{Kind: CopyText}.WithDefaults(false))
	if _, err := r.ReadRow(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadRow(); !errors.Is(err, boom) {
		t.Errorf("got %v, want boom", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func FuzzCopyRowReader(f *testing.F) {
	f.Add([]byte("1\ta\\tb\n\\N\t\\x4"), uint8(0))
	f.Add([]byte("1,\"a\"\"b\",\n\"open"), uint8(1))
	f.Add(append(append([]byte(nil), binaryCopySignature...), 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, kind uint8) {
		fmt := CopyFormat{Kind: CopyFormatKind(kind % 3), Columns: 3}.WithDefaults(false)
		r := newCopyRowReader(bytes.NewReader(data), fmt)
		for i := 0; i < 10000; i++ {
			if _, err := r.ReadRow(); err != nil {
				return
			}
		}
	})
}

// An empty value is not NULL, even when it is the first thing a reader
// decodes (its buffers still empty).
func TestCopyEmptyFirstValue(t *testing.T) {
	var b bytes.Buffer
	b.Write(binaryCopySignature)
	b.Write([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	binary.Write(&b, binary.BigEndian, int16(1))
	binary.Write(&b, binary.BigEndian, int32(0))
	for _, tc := range []struct {
		name, data string
		f          CopyFormat
	}{
		{"binary", b.String(), CopyFormat{Kind: CopyBinary}},
		{"csv", "\"\"\n", CopyFormat{Kind: CopyCSV}.WithDefaults(false)},
		{"text", "\n", CopyFormat{Kind: CopyText}.WithDefaults(false)},
	} {
		r := newCopyRowReader(strings.NewReader(tc.data), tc.f)
		row, err := r.ReadRow()
		if err != nil || len(row) != 1 || row[0] == nil {
			t.Errorf("%s: %q (nil: %v), %v; want one empty value", tc.name, row, len(row) == 1 && row[0] == nil, err)
		}
	}
}
