package plimsoll

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// displaysBase is a python result without displays (and without its record).
const displaysBase = `{"provider":"linux","isolation":"container","environment":"sha256:ab","duration_ms":812,` +
	`"kind":"python","exit_code":0,"timed_out":false,"stdout":"","stderr":"","stdout_truncated":false,` +
	`"stderr_truncated":false`

// withFields is displaysBase with more members (a JSON fragment starting with ',' or empty).
func withFields(fields string) string { return displaysBase + fields + "}" }

func mustTree(t *testing.T, text string) *jsonValue {
	t.Helper()
	tree, err := parseJSON([]byte(text))
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return tree
}

func mustResultDigest(t *testing.T, text string) string {
	t.Helper()
	d, err := resultDigest(mustTree(t, text))
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return d
}

// baseEncoding is the encoding of displaysBase by §3.2 rows 1-17, written out by hand.
func baseEncoding() *encoder {
	e := newEncoder(domainResult)
	e.str("provider", "linux")
	e.str("isolation", "container")
	e.str("environment", "sha256:ab")
	e.str("kind", "python")
	e.integer("exit_code", 0)
	e.boolean("timed_out", false)
	e.str("stdout", "")
	e.str("stderr", "")
	e.boolean("stdout_truncated", false)
	e.boolean("stderr_truncated", false)
	e.integer("duration_ms", 812)
	e.integer("steps", 0)
	e.integer("artifacts", 0)
	e.integer("advice", 0)
	return e
}

// TestDisplaysDigest: rows 18 and 19 come after advice, and only when there is something to say.
func TestDisplaysDigest(t *testing.T) {
	none := mustResultDigest(t, withFields(""))
	if want := baseEncoding().sum(); none != want {
		t.Fatalf("the result without displays digests to %s; by hand %s", none, want)
	}
	// Absent, null and [] displays, and an absent, null or false displays_truncated: no pair at all.
	for _, same := range []string{`,"displays":[]`, `,"displays":null`, `,"displays_truncated":false`,
		`,"displays_truncated":null`, `,"displays":[],"displays_truncated":false`} {
		if got := mustResultDigest(t, withFields(same)); got != none {
			t.Errorf("%s: %s, want the digest without displays %s", same, got, none)
		}
	}

	png := []byte("\x89PNG\r\n\x1a\n\x00\x00")
	one := `,"displays":[{"mime":"image/png","data":{"base64":"` + base64.StdEncoding.EncodeToString(png) +
		`"},"width":640,"height":480},{"mime":"text/plain","data":"   a\n0  1"}],"displays_truncated":true`
	e := baseEncoding()
	e.integer("displays", 2)
	e.str("display.mime", "image/png")
	e.bytes("display.data", png)
	e.integer("display.width", 640)
	e.integer("display.height", 480)
	e.str("display.mime", "text/plain")
	e.str("display.data", "   a\n0  1")
	e.integer("display.width", 0) // absent is 0
	e.integer("display.height", 0)
	e.boolean("displays_truncated", true)
	got := mustResultDigest(t, withFields(one))
	if want := e.sum(); got != want {
		t.Fatalf("two displays and displays_truncated: %s; by hand %s", got, want)
	}
	if got == none {
		t.Fatal("displays left the result digest unchanged")
	}
	// The order of the members on the wire does not matter; the order of the rows does.
	reordered := `{"displays_truncated":true,"displays":[{"height":480,"width":640,"data":{"base64":"` +
		base64.StdEncoding.EncodeToString(png) + `"},"mime":"image/png"},{"data":"   a\n0  1","mime":"text/plain"}],` +
		displaysBase[1:] + "}"
	if again := mustResultDigest(t, reordered); again != got {
		t.Errorf("the same result with its members in another order: %s, want %s", again, got)
	}

	// An absent width or height is 0, the same as an explicit 0 (which the reader refuses).
	absent := mustResultDigest(t, withFields(`,"displays":[{"mime":"text/plain","data":"x"}]`))
	for _, same := range []string{`,"displays":[{"mime":"text/plain","data":"x","width":0,"height":0}]`,
		`,"displays":[{"mime":"text/plain","data":"x","width":null}]`} {
		if got := mustResultDigest(t, withFields(same)); got != absent {
			t.Errorf("%s: %s, want the digest with no width %s", same, got, absent)
		}
	}
	if absent == none {
		t.Error("a display left the result digest unchanged")
	}

	// Every input of a display changes the digest, and so do the order and displays_truncated.
	seen := map[string]string{"none": none, "absent": absent}
	for name, fields := range map[string]string{
		"truncated only": `,"displays_truncated":true`,
		"truncated":      `,"displays":[{"mime":"text/plain","data":"x"}],"displays_truncated":true`,
		"mime":           `,"displays":[{"mime":"text/html","data":"x"}]`,
		"data":           `,"displays":[{"mime":"text/plain","data":"y"}]`,
		"data empty":     `,"displays":[{"mime":"text/plain","data":""}]`,
		"data base64":    `,"displays":[{"mime":"text/plain","data":{"base64":"/w=="}}]`,
		"width":          `,"displays":[{"mime":"text/plain","data":"x","width":1}]`,
		"height":         `,"displays":[{"mime":"text/plain","data":"x","height":1}]`,
		"two":            `,"displays":[{"mime":"text/plain","data":"x"},{"mime":"text/html","data":"x"}]`,
		"two swapped":    `,"displays":[{"mime":"text/html","data":"x"},{"mime":"text/plain","data":"x"}]`,
		"mime into data": `,"displays":[{"mime":"text/plai","data":"nx"}]`,
	} {
		d := mustResultDigest(t, withFields(fields))
		for other, od := range seen {
			if d == od {
				t.Errorf("%s gives the same result digest as %s", name, other)
			}
		}
		seen[name] = d
	}
	// The same bytes as a string and as base64 are the same data.
	if a, b := mustResultDigest(t, withFields(`,"displays":[{"mime":"text/plain","data":"hi"}]`)),
		mustResultDigest(t, withFields(`,"displays":[{"mime":"text/plain","data":{"base64":"aGk="}}]`)); a != b {
		t.Error("data as a string and as base64 of the same bytes digest differently")
	}
}

// malformedDisplays are answers the digest cannot encode: each is refused by resultDigest and so
// by checkAnswer.
var malformedDisplays = []string{
	`,"displays":{}`,
	`,"displays":"image/png"`,
	`,"displays":true`,
	`,"displays":[7]`,
	`,"displays":[null]`,
	`,"displays":[[]]`,
	`,"displays":[{"data":"x"}]`,
	`,"displays":[{"mime":7,"data":"x"}]`,
	`,"displays":[{"mime":null,"data":"x"}]`,
	`,"displays":[{"mime":"text/plain"}]`,
	`,"displays":[{"mime":"text/plain","data":7}]`,
	`,"displays":[{"mime":"text/plain","data":null}]`,
	`,"displays":[{"mime":"text/plain","data":{"base64":"!!"}}]`,
	`,"displays":[{"mime":"text/plain","data":{"base64":"aGk"}}]`,
	`,"displays":[{"mime":"text/plain","data":{"base64":"aGk=","x":1}}]`,
	`,"displays":[{"mime":"text/plain","data":{"hex":"00"}}]`,
	`,"displays":[{"mime":"image/png","data":"x","width":"2"}]`,
	`,"displays":[{"mime":"image/png","data":"x","width":1.5}]`,
	`,"displays":[{"mime":"image/png","data":"x","height":true}]`,
	`,"displays":[{"mime":"image/png","data":"x","height":1e3}]`,
	`,"displays":[{"mime":"image/png","data":"x","width":99999999999999999999}]`,
	`,"displays":[{"mime":"image/png","data":"x","alt":"a figure"}]`,
	`,"displays":[{"mime":"text/plain","data":"x"},{"mime":"text/plain","data":"x","Mime":"x"}]`,
	`,"displays_truncated":"true"`,
	`,"displays_truncated":1`,
	`,"displays_truncated":[]`,
}

// malformedForReading are well typed, so they have a digest, but break the wire's rules; the
// reader refuses them.
var malformedForReading = []string{
	`,"displays":[{"mime":"","data":"x"}]`,
	`,"displays":[{"mime":"image/png","data":"x","width":0}]`,
	`,"displays":[{"mime":"image/png","data":"x","width":-1}]`,
	`,"displays":[{"mime":"image/png","data":"x","height":0}]`,
	`,"displays":[{"mime":"image/png","data":"x","height":-480}]`,
	`,"displays":[{"mime":"image/png","data":"x","width":4294967296}]`,
}

// anyRecord is a record that reads (decodeResult does not check its digests).
var anyRecord = `,"record":{"version":1,"request_sha256":"","result_sha256":"","provider":"linux",` +
	`"isolation":"container","environment":"sha256:ab","policy":"","started_unix_ms":1,"ended_unix_ms":1,` +
	`"record_sha256":""}`

// decodeWith reads displaysBase with more members and a record.
func decodeWith(t *testing.T, fields string) (*Result, error) {
	t.Helper()
	return decodeResult(mustTree(t, withFields(fields+anyRecord)))
}

func TestDisplaysMalformed(t *testing.T) {
	if _, err := decodeWith(t, `,"displays":[{"mime":"text/plain","data":"x"}]`); err != nil {
		t.Fatalf("the well-formed answer is not read: %v", err)
	}
	for _, bad := range malformedDisplays {
		if _, err := resultDigest(mustTree(t, withFields(bad))); err == nil {
			t.Errorf("%s has a result digest", bad)
		}
		if _, err := decodeWith(t, bad); err == nil || !strings.Contains(err.Error(), "displays") {
			t.Errorf("%s was read (%v)", bad, err)
		}
	}
	for _, bad := range malformedForReading {
		if _, err := resultDigest(mustTree(t, withFields(bad))); err != nil {
			t.Errorf("%s: %v (it is well typed)", bad, err)
		}
		if _, err := decodeWith(t, bad); err == nil || !strings.Contains(err.Error(), "displays") {
			t.Errorf("%s was read (%v)", bad, err)
		}
	}
}

// tinyPNG is a real PNG of w×h pixels.
func tinyPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// signAnswer gives a result (JSON without its record) the record a daemon would: the digests of
// the request as received and of the result, under a made-up policy.
func signAnswer(t *testing.T, request []byte, result string) string {
	t.Helper()
	requestSHA, err := requestDigest(mustTree(t, string(request)))
	if err != nil {
		t.Fatal(err)
	}
	tree := mustTree(t, result)
	resultSHA, err := resultDigest(tree)
	if err != nil {
		t.Fatal(err)
	}
	r := &reader{}
	record := `"version":1,"request_sha256":"` + requestSHA + `","result_sha256":"` + resultSHA +
		`","provider":"` + r.str(tree, "provider", "") + `","isolation":"` + r.str(tree, "isolation", "") +
		`","environment":"` + r.str(tree, "environment", "") + `","policy":"` + strings.Repeat("0", 64) +
		`","started_unix_ms":1764400001600,"ended_unix_ms":1764400002415`
	recordSHA, err := recordDigest(mustTree(t, "{"+record+"}"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(result, "}") + `,"record":{` + record + `,"record_sha256":"` + recordSHA + `"}}`
}

// TestDisplaysRead: a figure travels as base64 and comes back as the PNG's bytes, with its size;
// text displays are strings; displays_truncated is read; absent fields are nil, 0 and false.
func TestDisplaysRead(t *testing.T) {
	figure := tinyPNG(t, 3, 2)
	fields := `,"displays":[{"mime":"image/png","data":{"base64":"` + base64.StdEncoding.EncodeToString(figure) +
		`"},"width":3,"height":2},{"mime":"text/html","data":"<table></table>"},` +
		`{"mime":"text/plain","data":"   a\n0  1"}],"displays_truncated":true`
	res, err := decodeWith(t, fields)
	if err != nil {
		t.Fatal(err)
	}
	want := []Display{{Mime: "image/png", Data: figure, Width: 3, Height: 2},
		{Mime: "text/html", Data: []byte("<table></table>")}, {Mime: "text/plain", Data: []byte("   a\n0  1")}}
	if !reflect.DeepEqual(res.Displays, want) || !res.DisplaysTruncated {
		t.Fatalf("Displays %+v truncated %v, want %+v and true", res.Displays, res.DisplaysTruncated, want)
	}
	if res.Displays[2].DataText() != "   a\n0  1" {
		t.Errorf("DataText() = %q", res.Displays[2].DataText())
	}
	// The bytes are the figure, as they go in a file.
	path := filepath.Join(t.TempDir(), "figure-1.png")
	if err := os.WriteFile(path, res.Displays[0].Data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	config, err := png.DecodeConfig(f)
	if err != nil || config.Width != 3 || config.Height != 2 {
		t.Errorf("the written figure: %+v, %v", config, err)
	}

	for _, fields := range []string{"", `,"displays":[]`, `,"displays":null`, `,"displays_truncated":false`,
		`,"displays_truncated":null`} {
		res, err := decodeWith(t, fields)
		if err != nil {
			t.Fatalf("%s: %v", fields, err)
		}
		if res.Displays != nil || res.DisplaysTruncated {
			t.Errorf("%s: Displays %+v, truncated %v", fields, res.Displays, res.DisplaysTruncated)
		}
	}
	res, err = decodeWith(t, `,"displays_truncated":true`)
	if err != nil || res.Displays != nil || !res.DisplaysTruncated {
		t.Errorf("displays_truncated alone: %+v, %v", res, err)
	}
}

// TestDisplaysExchange: displays come through a run's whole check (a daemon's signed answer), and
// an answer whose figure was changed on the way, or whose displays were dropped, is data_loss.
func TestDisplaysExchange(t *testing.T) {
	figure := tinyPNG(t, 4, 3)
	result := withFields(`,"displays":[{"mime":"image/png","data":{"base64":"` +
		base64.StdEncoding.EncodeToString(figure) + `"},"width":4,"height":3}]`)
	code := "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()\n"
	request := Request{Python: &Code{Code: []byte(code)}, Image: "data"}
	body, err := request.marshal()
	if err != nil {
		t.Fatal(err)
	}
	signed := signAnswer(t, body, result)
	var mu sync.Mutex
	answer := signed
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ := io.ReadAll(r.Body)
		w.Header().Set("Plimsoll-Request-Id", r.Header.Get("Plimsoll-Request-Id"))
		w.Header().Set("Content-Type", "application/json")
		if !bytes.Equal(got, body) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"code":"invalid_argument","message":"not the request expected"}`)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		_, _ = io.WriteString(w, answer)
	}))
	defer server.Close()
	c, err := New(server.URL, WithToken(""))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	r, err := c.RunPython(ctx, code, Image("data"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []Display{{Mime: "image/png", Data: figure, Width: 4, Height: 3}}; !reflect.DeepEqual(r.Displays, want) ||
		r.DisplaysTruncated {
		t.Fatalf("Displays %+v truncated %v", r.Displays, r.DisplaysTruncated)
	}

	encoded := base64.StdEncoding.EncodeToString(figure)
	other := append([]byte(nil), figure...)
	other[len(other)-1] ^= 1
	for name, change := range map[string]func(string) string{
		"figure changed": func(a string) string {
			return strings.Replace(a, encoded, base64.StdEncoding.EncodeToString(other), 1)
		},
		"width changed":  func(a string) string { return strings.Replace(a, `"width":4`, `"width":5`, 1) },
		"height dropped": func(a string) string { return strings.Replace(a, `,"height":3`, ``, 1) },
		"truncated added": func(a string) string {
			return strings.Replace(a, `,"record"`, `,"displays_truncated":true,"record"`, 1)
		},
		"displays dropped": func(a string) string { return strings.Replace(a, `"displays":[`, `"dropped":[`, 1) },
		"mime changed":     func(a string) string { return strings.Replace(a, `"image/png"`, `"image/jpeg"`, 1) },
	} {
		changed := change(signed)
		if changed == signed {
			t.Fatalf("%s: the change does not apply", name)
		}
		mu.Lock()
		answer = changed
		mu.Unlock()
		_, err := c.RunPython(ctx, code, Image("data"))
		var pe *Error
		if !errors.As(err, &pe) || pe.Code != CodeDataLoss || pe.NotDispatched != "" {
			t.Errorf("%s: want data_loss without a mark, got %v", name, err)
		}
	}
}

// TestDisplaysVector writes out the encoding of vector python-displays by hand from §3.2 rows 18
// and 19 (TestVectors checks its digests the ordinary way).
func TestDisplaysVector(t *testing.T) {
	vf := loadVectors(t)
	v := vf.vectors["python-displays"]
	if v == nil {
		t.Fatal("testdata/records/vectors.json has no python-displays vector")
	}
	res := v.get("result")
	r := &reader{}
	e := newEncoder(domainResult)
	for _, k := range [...]string{"provider", "isolation", "environment", "kind"} {
		e.str(k, r.str(res, k, k))
	}
	e.integer("exit_code", r.integer(res, "exit_code", "exit_code"))
	e.boolean("timed_out", r.boolean(res, "timed_out", "timed_out"))
	e.bytes("stdout", r.bytes(res, "stdout", "stdout"))
	e.bytes("stderr", r.bytes(res, "stderr", "stderr"))
	e.boolean("stdout_truncated", r.boolean(res, "stdout_truncated", "stdout_truncated"))
	e.boolean("stderr_truncated", r.boolean(res, "stderr_truncated", "stderr_truncated"))
	e.integer("duration_ms", r.integer(res, "duration_ms", "duration_ms"))
	e.integer("steps", 0)
	e.integer("artifacts", 0)
	e.integer("advice", 0)
	displays := r.array(res, "displays", "displays")
	if len(displays) == 0 {
		t.Fatal("the vector has no displays")
	}
	e.integer("displays", int64(len(displays)))
	for i, d := range displays {
		path := "displays[" + strconv.Itoa(i) + "]"
		e.str("display.mime", r.str(d, "mime", path+".mime"))
		e.bytes("display.data", r.bytes(d, "data", path+".data"))
		for _, k := range [...]string{"width", "height"} {
			n := int64(0)
			if present(d.get(k)) {
				n = r.integer(d, k, path+"."+k)
			}
			e.integer("display."+k, n)
		}
	}
	if b, _ := asBool(res.get("displays_truncated"), ""); b {
		e.boolean("displays_truncated", true)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got, want := e.sum(), wantString(t, v, "result_sha256"); got != want {
		t.Errorf("python-displays by hand: %s, the vector says %s", got, want)
	}
	decoded, err := decodeResult(res)
	if err != nil {
		t.Fatal(err)
	}
	if len(decoded.Displays) != len(displays) || decoded.Displays[0].Mime != "image/png" ||
		!bytes.HasPrefix(decoded.Displays[0].Data, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("the vector's displays read as %+v", decoded.Displays)
	}
}
