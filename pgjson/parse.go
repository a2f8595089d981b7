package pgjson

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the JSON type of a value.
type Kind uint8

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Value is a parsed JSON value.
type Value struct {
	Kind Kind
	// Raw is the value's text as written, without surrounding white space.
	Raw string
	// Str is a string's decoded text, a number's canonical numeric text,
	// "true" or "false".
	Str string
	// Elems are an array's elements.
	Elems []*Value
	// Keys and Vals are an object's members in the order written,
	// duplicates included.
	Keys []string
	Vals []*Value
}

// SyntaxError is malformed JSON text (SQLSTATE 22P02 in PostgreSQL).
type SyntaxError struct{ Msg string }

func (e *SyntaxError) Error() string { return "invalid input syntax for type json: " + e.Msg }

// RangeError is a number numeric cannot hold (SQLSTATE 22003).
type RangeError struct{ Num string }

func (e *RangeError) Error() string {
	return fmt.Sprintf("value overflows numeric format: %.40s", e.Num)
}

// UnicodeError is \u0000 in jsonb text, which PostgreSQL refuses (22P05).
type UnicodeError struct{}

func (e *UnicodeError) Error() string {
	return "unsupported Unicode escape sequence: \\u0000 cannot be converted to text"
}

// maxDepth bounds nesting, as PostgreSQL's stack depth check does.
const maxDepth = 6400

// Parse parses JSON text. jsonb refuses \u0000, which jsonb cannot store.
func Parse(text string, jsonb bool) (*Value, error) {
	p := &parser{s: text, jsonb: jsonb}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.s) {
		return nil, p.fail("unexpected text after the value")
	}
	return v, nil
}

type parser struct {
	s     string
	i     int
	jsonb bool
}

func (p *parser) fail(msg string) error {
	if p.i < len(p.s) {
		return &SyntaxError{Msg: fmt.Sprintf("%s at offset %d", msg, p.i)}
	}
	return &SyntaxError{Msg: msg + " at the end of the input"}
}

func (p *parser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (*Value, error) {
	if depth > maxDepth {
		return nil, p.fail("nesting too deep")
	}
	if p.i >= len(p.s) {
		return nil, p.fail("expected a value")
	}
	start := p.i
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		str, err := p.str()
		if err != nil {
			return nil, err
		}
		return &Value{Kind: String, Raw: p.s[start:p.i], Str: str}, nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	for _, lit := range []struct {
		word string
		kind Kind
	}{{"true", Bool}, {"false", Bool}, {"null", Null}} {
		if strings.HasPrefix(p.s[p.i:], lit.word) {
			p.i += len(lit.word)
			return &Value{Kind: lit.kind, Raw: lit.word, Str: lit.word}, nil
		}
	}
	return nil, p.fail("expected a value")
}

func (p *parser) object(depth int) (*Value, error) {
	v := &Value{Kind: Object}
	err := p.container(v, '}', func() error {
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return p.fail("expected a string key")
		}
		key, err := p.str()
		if err != nil {
			return err
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return p.fail(`expected ":"`)
		}
		p.i++
		p.space()
		val, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		v.Keys, v.Vals = append(v.Keys, key), append(v.Vals, val)
		return nil
	})
	return v, err
}

func (p *parser) array(depth int) (*Value, error) {
	v := &Value{Kind: Array}
	err := p.container(v, ']', func() error {
		e, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		v.Elems = append(v.Elems, e)
		return nil
	})
	return v, err
}

// container reads an object or array at p.i (its opening character) whose
// items item reads, up to the closing character end; it sets v.Raw.
func (p *parser) container(v *Value, end byte, item func() error) error {
	start := p.i
	p.i++
	p.space()
	if p.i < len(p.s) && p.s[p.i] == end {
		p.i++
		v.Raw = p.s[start:p.i]
		return nil
	}
	for {
		p.space()
		if err := item(); err != nil {
			return err
		}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			v.Raw = p.s[start:p.i]
			return nil
		}
		return p.fail(`expected "," or "` + string(end) + `"`)
	}
}

// str reads a string literal at p.i and returns its decoded text.
func (p *parser) str() (string, error) {
	p.i++ // opening quote
	var sb strings.Builder
	plain := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			sb.WriteString(p.s[plain:p.i])
			p.i++
			return sb.String(), nil
		case c < 0x20:
			return "", p.fail("control character in a string")
		case c == '\\':
			sb.WriteString(p.s[plain:p.i])
			if err := p.escape(&sb); err != nil {
				return "", err
			}
			plain = p.i
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(p.s[p.i:])
			if r == utf8.RuneError && n == 1 {
				return "", p.fail("invalid UTF-8")
			}
			p.i += n
		default:
			p.i++
		}
	}
	return "", p.fail("unterminated string")
}

func (p *parser) escape(sb *strings.Builder) error {
	p.i++ // backslash
	if p.i >= len(p.s) {
		return p.fail("unterminated escape")
	}
	c := p.s[p.i]
	p.i++
	switch c {
	case '"', '\\', '/':
		sb.WriteByte(c)
	case 'b':
		sb.WriteByte('\b')
	case 'f':
		sb.WriteByte('\f')
	case 'n':
		sb.WriteByte('\n')
	case 'r':
		sb.WriteByte('\r')
	case 't':
		sb.WriteByte('\t')
	case 'u':
		r, err := p.hex4()
		if err != nil {
			return err
		}
		if utf16.IsSurrogate(r) {
			if !strings.HasPrefix(p.s[p.i:], `\u`) {
				return p.fail("a high surrogate must be followed by a low surrogate")
			}
			p.i += 2
			r2, err := p.hex4()
			if err != nil {
				return err
			}
			if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
				return p.fail("invalid surrogate pair")
			}
		}
		if r == 0 && p.jsonb {
			return &UnicodeError{}
		}
		sb.WriteRune(r)
	default:
		return p.fail("invalid escape")
	}
	return nil
}

func (p *parser) hex4() (rune, error) {
	if p.i+4 > len(p.s) {
		return 0, p.fail(`"\u" must be followed by four hexadecimal digits`)
	}
	n, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil {
		return 0, p.fail(`"\u" must be followed by four hexadecimal digits`)
	}
	p.i += 4
	return rune(n), nil
}

// number reads a JSON number; Str is its text as numeric prints it.
func (p *parser) number() (*Value, error) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	intStart := p.i
	if n := digits(); n == 0 || n > 1 && p.s[intStart] == '0' {
		return nil, p.fail("invalid number")
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, p.fail("invalid number")
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, p.fail("invalid number")
		}
	}
	raw := p.s[start:p.i]
	text, err := numericText(raw)
	if err != nil {
		return nil, err
	}
	return &Value{Kind: Number, Raw: raw, Str: text}, nil
}
