package pgwire

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/bidi"
	"golang.org/x/text/unicode/norm"
)

// saslPrep normalises a password before it is hashed into a new verifier,
// as PostgreSQL's pg_saslprep does (SASLprep, RFC 4013, on the stringprep
// tables of RFC 3454):
//
//   - a pure ASCII password is used unchanged;
//   - otherwise characters "commonly mapped to nothing" (RFC 3454 B.1) are
//     removed, non-ASCII spaces (C.1.2) become U+0020, and the result is NFKC
//     normalised;
//   - if the result holds a prohibited character (C.2–C.9), an unassigned
//     code point, or breaks the bidirectional rule, the password is used
//     unchanged, which is PostgreSQL's fallback too.
//
// Unassigned code points are judged by the Unicode version of the Go
// runtime rather than Unicode 3.2; that differs from PostgreSQL only for
// characters added after 3.2 that NFKC would change.
func saslPrep(password string) string {
	ascii := true
	for i := 0; i < len(password); i++ {
		if password[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return password
	}

	var mapped strings.Builder
	for _, r := range password {
		switch {
		case mappedToNothing(r):
		case nonASCIISpace(r):
			mapped.WriteRune(' ')
		default:
			mapped.WriteRune(r)
		}
	}
	out := norm.NFKC.String(mapped.String())
	if out == "" {
		return password
	}

	var hasRandAL, hasL bool
	for _, r := range out {
		if prohibited(r) || !assigned(r) {
			return password
		}
		switch bidiClass(r) {
		case bidi.R, bidi.AL:
			hasRandAL = true
		case bidi.L:
			hasL = true
		}
	}
	if hasRandAL {
		runes := []rune(out)
		first, last := bidiClass(runes[0]), bidiClass(runes[len(runes)-1])
		if hasL || (first != bidi.R && first != bidi.AL) || (last != bidi.R && last != bidi.AL) {
			return password
		}
	}
	return out
}

// mappedToNothing is RFC 3454 table B.1.
func mappedToNothing(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x034F, r == 0x1806, r == 0x2060, r == 0xFEFF:
		return true
	case r >= 0x180B && r <= 0x180D, r >= 0x200B && r <= 0x200D, r >= 0xFE00 && r <= 0xFE0F:
		return true
	}
	return false
}

// nonASCIISpace is RFC 3454 table C.1.2.
func nonASCIISpace(r rune) bool {
	switch {
	case r == 0x00A0, r == 0x1680, r == 0x202F, r == 0x205F, r == 0x3000:
		return true
	case r >= 0x2000 && r <= 0x200B:
		return true
	}
	return false
}

// prohibited covers RFC 3454 tables C.1.2 and C.2.1 through C.9, the
// prohibited output of SASLprep.
func prohibited(r rune) bool {
	if nonASCIISpace(r) {
		return true
	}
	switch {
	// C.2.1 ASCII control characters.
	case r <= 0x1F, r == 0x7F:
		return true
	// C.2.2 non-ASCII control characters.
	case r >= 0x80 && r <= 0x9F, r == 0x06DD, r == 0x070F, r == 0x180E,
		r == 0x200C, r == 0x200D, r == 0x2028, r == 0x2029,
		r >= 0x2060 && r <= 0x2063, r >= 0x206A && r <= 0x206F, r == 0xFEFF,
		r >= 0xFFF9 && r <= 0xFFFC, r >= 0x1D173 && r <= 0x1D17A:
		return true
	// C.3 private use.
	case r >= 0xE000 && r <= 0xF8FF, r >= 0xF0000 && r <= 0xFFFFD, r >= 0x100000 && r <= 0x10FFFD:
		return true
	// C.4 non-character code points.
	case r >= 0xFDD0 && r <= 0xFDEF, r&0xFFFE == 0xFFFE:
		return true
	// C.5 surrogate codes.
	case r >= 0xD800 && r <= 0xDFFF:
		return true
	// C.6 inappropriate for plain text.
	case r >= 0xFFF9 && r <= 0xFFFD:
		return true
	// C.7 inappropriate for canonical representation.
	case r >= 0x2FF0 && r <= 0x2FFB:
		return true
	// C.8 change display properties or deprecated.
	case r == 0x0340, r == 0x0341, r == 0x200E, r == 0x200F, r >= 0x202A && r <= 0x202E:
		return true
	// C.9 tagging characters.
	case r == 0xE0001, r >= 0xE0020 && r <= 0xE007F:
		return true
	}
	return false
}

// assigned reports whether r is an assigned code point.
func assigned(r rune) bool {
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.C)
}

func bidiClass(r rune) bidi.Class {
	p, _ := bidi.LookupRune(r)
	return p.Class()
}
