package plimsoll

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonKind is the type of a parsed JSON value.
type jsonKind uint8

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonNumber
	jsonString
	jsonArray
	jsonObject
)

// jsonValue is one parsed JSON value. Numbers keep their text so that integers stay exact and
// floats (with -0.0) are read by strconv; objects keep their members in order. The parser
// refuses a key repeated in one object, invalid UTF-8 and lone surrogates.
type jsonValue struct {
	kind    jsonKind
	boolean bool
	text    string // a number's text, or a string's decoded value
	items   []*jsonValue
	members []jsonMember
}

type jsonMember struct {
	key   string
	value *jsonValue
}

const maxJSONDepth = 64

func (v *jsonValue) get(key string) *jsonValue {
	if v == nil || v.kind != jsonObject {
		return nil
	}
	for i := range v.members {
		if v.members[i].key == key {
			return v.members[i].value
		}
	}
	return nil
}

func (k jsonKind) String() string {
	switch k {
	case jsonNull:
		return "null"
	case jsonBool:
		return "a boolean"
	case jsonNumber:
		return "a number"
	case jsonString:
		return "a string"
	case jsonArray:
		return "an array"
	default:
		return "an object"
	}
}

func parseJSON(data []byte) (*jsonValue, error) {
	p := jsonParser{data: data}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.data) {
		return nil, p.fail("bytes after the JSON value")
	}
	return v, nil
}

type jsonParser struct {
	data []byte
	pos  int
}

func (p *jsonParser) fail(what string) error {
	return fmt.Errorf("invalid JSON at byte %d: %s", p.pos, what)
}

func (p *jsonParser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) literal(word string) bool {
	if len(p.data)-p.pos >= len(word) && string(p.data[p.pos:p.pos+len(word)]) == word {
		p.pos += len(word)
		return true
	}
	return false
}

func (p *jsonParser) value(depth int) (*jsonValue, error) {
	if depth > maxJSONDepth {
		return nil, p.fail("nested deeper than 64")
	}
	if p.pos >= len(p.data) {
		return nil, p.fail("unexpected end")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		p.pos++
		v := &jsonValue{kind: jsonObject}
		p.space()
		if p.pos < len(p.data) && p.data[p.pos] == '}' {
			p.pos++
			return v, nil
		}
		for {
			p.space()
			if p.pos >= len(p.data) || p.data[p.pos] != '"' {
				return nil, p.fail("expected a key")
			}
			key, err := p.str()
			if err != nil {
				return nil, err
			}
			for i := range v.members {
				if v.members[i].key == key {
					return nil, p.fail(fmt.Sprintf("the key %q is repeated", key))
				}
			}
			p.space()
			if p.pos >= len(p.data) || p.data[p.pos] != ':' {
				return nil, p.fail("expected ':'")
			}
			p.pos++
			p.space()
			member, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			v.members = append(v.members, jsonMember{key, member})
			p.space()
			if p.pos < len(p.data) && p.data[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.pos < len(p.data) && p.data[p.pos] == '}' {
				p.pos++
				return v, nil
			}
			return nil, p.fail("expected ',' or '}'")
		}
	case c == '[':
		p.pos++
		v := &jsonValue{kind: jsonArray}
		p.space()
		if p.pos < len(p.data) && p.data[p.pos] == ']' {
			p.pos++
			return v, nil
		}
		for {
			p.space()
			item, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			v.items = append(v.items, item)
			p.space()
			if p.pos < len(p.data) && p.data[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.pos < len(p.data) && p.data[p.pos] == ']' {
				p.pos++
				return v, nil
			}
			return nil, p.fail("expected ',' or ']'")
		}
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &jsonValue{kind: jsonString, text: s}, nil
	case c == 't':
		if p.literal("true") {
			return &jsonValue{kind: jsonBool, boolean: true}, nil
		}
	case c == 'f':
		if p.literal("false") {
			return &jsonValue{kind: jsonBool}, nil
		}
	case c == 'n':
		if p.literal("null") {
			return &jsonValue{kind: jsonNull}, nil
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return nil, p.fail("unexpected character")
}

func (p *jsonParser) number() (*jsonValue, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	intStart := p.pos
	if n := digits(); n == 0 || (n > 1 && p.data[intStart] == '0') {
		return nil, p.fail("malformed number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.fail("malformed number")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.fail("malformed number")
		}
	}
	return &jsonValue{kind: jsonNumber, text: string(p.data[start:p.pos])}, nil
}

func hexDigit(c byte) (rune, bool) {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0'), true
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10, true
	}
	return 0, false
}

func (p *jsonParser) hex4() (rune, error) {
	if len(p.data)-p.pos < 4 {
		return 0, p.fail("short \\u escape")
	}
	var r rune
	for i := 0; i < 4; i++ {
		d, ok := hexDigit(p.data[p.pos+i])
		if !ok {
			return 0, p.fail("bad \\u escape")
		}
		r = r<<4 | d
	}
	p.pos += 4
	return r, nil
}

// str reads a string starting at its opening quote.
func (p *jsonParser) str() (string, error) {
	p.pos++
	start := p.pos
	// Fast path: no escapes.
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '"' {
			s := p.data[start:p.pos]
			p.pos++
			if !utf8.Valid(s) {
				return "", p.fail("a string is not valid UTF-8")
			}
			return string(s), nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", p.fail("a control character in a string")
		}
		p.pos++
	}
	var b strings.Builder
	b.Write(p.data[start:p.pos])
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			s := b.String()
			if !utf8.ValidString(s) {
				return "", p.fail("a string is not valid UTF-8")
			}
			return s, nil
		case c < 0x20:
			return "", p.fail("a control character in a string")
		case c != '\\':
			b.WriteByte(c)
			p.pos++
			continue
		}
		p.pos++
		if p.pos >= len(p.data) {
			break
		}
		e := p.data[p.pos]
		p.pos++
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, err := p.hex4()
			if err != nil {
				return "", err
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xdc00 || !p.literal("\\u") {
					return "", p.fail("a lone surrogate")
				}
				r2, err := p.hex4()
				if err != nil {
					return "", err
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return "", p.fail("a lone surrogate")
				}
			}
			b.WriteRune(r)
		default:
			return "", p.fail("a bad escape")
		}
	}
	return "", p.fail("an unterminated string")
}

// Typed readers over a parsed tree. Each names the field's path in its error.

var errAbsent = errors.New("absent")

func asInt(v *jsonValue, path string) (int64, error) {
	if v == nil || v.kind != jsonNumber {
		return 0, fmt.Errorf("%s must be an integer", path)
	}
	n, err := strconv.ParseInt(v.text, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s must be an integer in the 64-bit range", path)
	}
	return n, nil
}

func asBool(v *jsonValue, path string) (bool, error) {
	if v == nil || v.kind != jsonBool {
		return false, fmt.Errorf("%s must be a boolean", path)
	}
	return v.boolean, nil
}

func asString(v *jsonValue, path string) (string, error) {
	if v == nil || v.kind != jsonString {
		return "", fmt.Errorf("%s must be a string", path)
	}
	return v.text, nil
}

// asBytes reads a bytes field: a JSON string (its UTF-8 bytes) or {"base64": "..."} (canonical,
// padded, standard alphabet).
func asBytes(v *jsonValue, path string) ([]byte, error) {
	if v != nil && v.kind == jsonString {
		return []byte(v.text), nil
	}
	if v == nil || v.kind != jsonObject || len(v.members) != 1 || v.members[0].key != "base64" ||
		v.members[0].value.kind != jsonString {
		return nil, fmt.Errorf(`%s must be a string or {"base64": "..."}`, path)
	}
	text := v.members[0].value.text
	out, err := base64.StdEncoding.Strict().DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("%s.base64 is not canonical base64", path)
	}
	return out, nil
}

// asFloat reads a JSON number or one of "NaN", "Infinity", "-Infinity".
func asFloat(v *jsonValue, path string) (float64, error) {
	if v != nil && v.kind == jsonString {
		switch v.text {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
	}
	if v == nil || v.kind != jsonNumber {
		return 0, fmt.Errorf(`%s must be a number, "NaN", "Infinity" or "-Infinity"`, path)
	}
	f, err := strconv.ParseFloat(v.text, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%s must be a number", path)
	}
	return f, nil
}

func asArray(v *jsonValue, path string) ([]*jsonValue, error) {
	if v == nil || v.kind == jsonNull {
		return nil, nil
	}
	if v.kind != jsonArray {
		return nil, fmt.Errorf("%s must be an array", path)
	}
	return v.items, nil
}

func asObject(v *jsonValue, path string) (*jsonValue, error) {
	if v == nil || v.kind != jsonObject {
		return nil, fmt.Errorf("%s must be an object", path)
	}
	return v, nil
}

// present reports whether a field is there and not null.
func present(v *jsonValue) bool { return v != nil && v.kind != jsonNull }

// onlyKeys refuses a member that is not in the list (for requests, which are read strictly).
func onlyKeys(v *jsonValue, path string, keys ...string) error {
	for _, m := range v.members {
		known := false
		for _, k := range keys {
			if m.key == k {
				known = true
				break
			}
		}
		if !known {
			return fmt.Errorf("%s has an unknown field %q", path, m.key)
		}
	}
	return nil
}

// Writing JSON.

func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendJSONBytes writes bytes as the wire does: a string when valid UTF-8, else {"base64"}.
func appendJSONBytes(b []byte, data []byte) []byte {
	if utf8.Valid(data) {
		return appendJSONString(b, string(data))
	}
	b = append(b, `{"base64":"`...)
	b = base64.StdEncoding.AppendEncode(b, data)
	return append(b, `"}`...)
}
