package syntax

import (
	"strconv"
	"strings"
)

// Quote quotes s as an MLIR string literal: printable ASCII is kept, '"'
// and '\' are escaped with a backslash, and every other byte prints as a
// \XX hex escape. Unquote(Quote(s)) == s for every s.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			const hex = "0123456789ABCDEF"
			b.WriteByte('\\')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Unquote decodes an MLIR string literal as the lexer delimits it (the
// quotes included): \", \\, \n, \t and \XX hex escapes. It never fails:
// an unknown escape stands for the escaped character, and text shorter
// than two bytes is returned unchanged.
func Unquote(s string) string {
	if len(s) < 2 {
		return s
	}
	s = s[1 : len(s)-1]
	if !strings.Contains(s, `\`) {
		return s
	}
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			out.WriteByte(c)
			continue
		}
		i++
		i += unescape(&out, s, i)
	}
	return out.String()
}

// unescape writes the character escaped at s[i] (just after a '\') and
// returns how many more bytes it used.
func unescape(out *strings.Builder, s string, i int) int {
	switch n := s[i]; n {
	case 'n':
		out.WriteByte('\n')
	case 't':
		out.WriteByte('\t')
	case '"', '\\':
		out.WriteByte(n)
	default:
		if i+1 < len(s) {
			if v, err := strconv.ParseUint(s[i:i+2], 16, 8); err == nil {
				out.WriteByte(byte(v))
				return 1
			}
		}
		out.WriteByte(n)
	}
	return 0
}

// IsBareID reports whether s prints without quotes as a name: an
// identifier start ([A-Za-z_]) followed by identifier characters
// ([A-Za-z0-9_$.]).
func IsBareID(s string) bool {
	if s == "" || !IsIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !IsIdentChar(s[i]) {
			return false
		}
	}
	return true
}

// FormatFloat is the shortest decimal that reads back to v at the given
// precision (32 or 64 bits), always with a '.' as both lexers require of
// a float: 1.0, 2.5e-08, 1.0e+30. Infinities and NaN are the caller's.
func FormatFloat(v float64, bits int) string {
	s := strconv.FormatFloat(v, 'g', -1, bits)
	if strings.ContainsAny(s, ".") {
		return s
	}
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		return s[:i] + ".0" + s[i:]
	}
	return s + ".0"
}
