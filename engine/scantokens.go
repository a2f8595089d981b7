package engine

import (
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"
	"google.golang.org/protobuf/encoding/protowire"
)

// scanToken is one token of PostgreSQL's lexer: its byte range in the text,
// its grammar symbol and, for keywords, their kind.
type scanToken struct {
	start, end int
	tok        pg_query.Token
	kind       pg_query.KeywordKind
}

// Field numbers of pg_query's ScanResult and ScanToken messages.
const (
	scanResultTokens protowire.Number = 2
	scanTokenStart   protowire.Number = 1
	scanTokenEnd     protowire.Number = 2
	scanTokenToken   protowire.Number = 4
	scanTokenKeyword protowire.Number = 5
)

// scanTokens runs PostgreSQL's lexer over sql and calls fn for each token in
// order until fn returns false. It reads the scanner's protobuf output field
// by field instead of unmarshalling it, so no message per token is
// allocated: long statements are scanned in memory proportional to their
// length. A lexer error (an unterminated string or comment, …) is returned
// as pg_query reports it.
func scanTokens(sql string, fn func(scanToken) bool) error {
	b, err := pgparser.ScanToProtobuf(sql)
	if err != nil {
		return err
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("engine: scan result: %w", protowire.ParseError(n))
		}
		b = b[n:]
		if num != scanResultTokens || typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return fmt.Errorf("engine: scan result: %w", protowire.ParseError(n))
			}
			b = b[n:]
			continue
		}
		msg, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return fmt.Errorf("engine: scan result: %w", protowire.ParseError(n))
		}
		b = b[n:]
		t, err := decodeScanToken(msg)
		if err != nil {
			return err
		}
		if !fn(t) {
			return nil
		}
	}
	return nil
}

// decodeScanToken decodes one ScanToken message.
func decodeScanToken(b []byte) (scanToken, error) {
	var t scanToken
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return t, fmt.Errorf("engine: scan token: %w", protowire.ParseError(n))
		}
		b = b[n:]
		if typ != protowire.VarintType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return t, fmt.Errorf("engine: scan token: %w", protowire.ParseError(n))
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return t, fmt.Errorf("engine: scan token: %w", protowire.ParseError(n))
		}
		b = b[n:]
		switch num {
		case scanTokenStart:
			t.start = int(int32(v))
		case scanTokenEnd:
			t.end = int(int32(v))
		case scanTokenToken:
			t.tok = pg_query.Token(int32(v))
		case scanTokenKeyword:
			t.kind = pg_query.KeywordKind(int32(v))
		}
	}
	return t, nil
}
