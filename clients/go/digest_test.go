package plimsoll

import (
	"encoding/hex"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
)

type vectorFile struct {
	root    *jsonValue
	vectors map[string]*jsonValue
}

func loadVectors(t *testing.T) vectorFile {
	t.Helper()
	data, err := os.ReadFile(testdataFile(t, "PLIMSOLL_TEST_VECTORS", "testdata/records/vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := parseJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := asString(root.get("format"), "format"); f != "plimsoll.record-vectors.v1" {
		t.Fatalf("unexpected format %q", f)
	}
	vf := vectorFile{root: root, vectors: map[string]*jsonValue{}}
	for _, v := range root.get("vectors").items {
		name, _ := asString(v.get("name"), "name")
		vf.vectors[name] = v
	}
	return vf
}

func wantString(t *testing.T, v *jsonValue, key string) string {
	t.Helper()
	s, err := asString(v.get(key), key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestVectors recomputes every digest of every vector in testdata/records/vectors.json.
func TestVectors(t *testing.T) {
	vf := loadVectors(t)
	checked := 0
	for name, v := range vf.vectors {
		t.Run(name, func(t *testing.T) {
			if enc := v.get("encoding"); enc != nil {
				e := encoder{}
				e.value(wantString(t, enc, "domain"))
				for _, f := range enc.get("fields").items {
					fname := wantString(t, f, "name")
					value := f.get("value")
					switch kind := wantString(t, f, "type"); kind {
					case "integer", "count":
						n, err := asInt(value, fname)
						if err != nil {
							t.Fatal(err)
						}
						e.integer(fname, n)
					case "boolean":
						b, err := asBool(value, fname)
						if err != nil {
							t.Fatal(err)
						}
						e.boolean(fname, b)
					case "bytes", "string":
						b, err := asBytes(value, fname)
						if err != nil {
							t.Fatal(err)
						}
						e.bytes(fname, b)
					case "float":
						x, err := asFloat(value, fname)
						if err != nil {
							t.Fatal(err)
						}
						e.float(fname, x)
					default:
						t.Fatalf("unknown field type %q", kind)
					}
				}
				if got, want := hex.EncodeToString(e.buf), wantString(t, v, "encoding_hex"); got != want {
					t.Errorf("encoding_hex:\n got %s\nwant %s", got, want)
				}
				if got, want := e.sum(), wantString(t, v, "encoding_sha256"); got != want {
					t.Errorf("encoding_sha256 = %s, want %s", got, want)
				}
				checked++
			}
			if req := v.get("request"); req != nil {
				got, err := requestDigest(req)
				if err != nil {
					t.Fatal(err)
				}
				if want := wantString(t, v, "request_sha256"); got != want {
					t.Errorf("request_sha256 = %s, want %s", got, want)
				}
				checked++
			}
			if res := v.get("result"); res != nil {
				got, err := resultDigest(res)
				if err != nil {
					t.Fatal(err)
				}
				if want := wantString(t, v, "result_sha256"); got != want {
					t.Errorf("result_sha256 = %s, want %s", got, want)
				}
				record := res.get("record")
				gotRecord, err := recordDigest(record)
				if err != nil {
					t.Fatal(err)
				}
				if want := wantString(t, v, "record_sha256"); gotRecord != want {
					t.Errorf("record_sha256 = %s, want %s", gotRecord, want)
				}
				if inRecord := wantString(t, record, "record_sha256"); inRecord != gotRecord {
					t.Errorf("result.record.record_sha256 = %s, recomputed %s", inRecord, gotRecord)
				}
				if wantString(t, record, "result_sha256") != got {
					t.Errorf("the record's result_sha256 is not the result digest")
				}
				if v.get("request") != nil && wantString(t, record, "request_sha256") != wantString(t, v, "request_sha256") {
					t.Errorf("the record's request_sha256 is not the vector's")
				}
				// The whole exchange passes the client's check.
				if v.get("request") != nil && record.get("session") == nil {
					if _, err := checkAnswer(v.get("request"), res, nil); err != nil {
						t.Errorf("checkAnswer: %v", err)
					}
				}
				checked++
			}
			if limits := v.get("limits"); limits != nil {
				got, err := policyDigest(limits)
				if err != nil {
					t.Fatal(err)
				}
				if want := wantString(t, v, "policy_sha256"); got != want {
					t.Errorf("policy_sha256 = %s, want %s", got, want)
				}
				checked++
			}
			if id := v.get("session_id"); id != nil {
				if got, want := sessionDigest(wantString(t, v, "session_id")), wantString(t, v, "session_sha256"); got != want {
					t.Errorf("session_sha256 = %s, want %s", got, want)
				}
				checked++
			}
		})
	}
	if checked < len(vf.vectors) {
		t.Errorf("checked %d digests over %d vectors", checked, len(vf.vectors))
	}
}

// TestChains runs every chain of the vectors through the session chain check.
func TestChains(t *testing.T) {
	vf := loadVectors(t)
	chains := vf.root.get("chains").items
	if len(chains) == 0 {
		t.Fatal("no chains in the vectors")
	}
	for _, c := range chains {
		name := wantString(t, c, "name")
		t.Run(name, func(t *testing.T) {
			chain := &chainState{session: sessionDigest(wantString(t, c, "session_id"))}
			for i, vn := range c.get("vectors").items {
				v := vf.vectors[vn.text]
				if v == nil {
					t.Fatalf("chain names an unknown vector %q", vn.text)
				}
				req := v.get("request")
				if _, err := checkAnswer(req, v.get("result"), chain); err != nil {
					t.Fatalf("call %d (%s): %v", i+1, vn.text, err)
				}
				if chain.sequence != int64(i+1) {
					t.Fatalf("the chain did not advance")
				}
			}
			// Replaying the first call after the chain fails the check, and leaves the chain as it was.
			first := vf.vectors[c.get("vectors").items[0].text]
			before := *chain
			if _, err := checkAnswer(first.get("request"), first.get("result"), chain); err == nil {
				t.Fatal("a replayed first call passed the chain check")
			}
			if *chain != before {
				t.Fatal("a failed check advanced the chain")
			}
		})
	}
}

// TestDigestsChange: changing an input changes the digest (a check of the coverage).
func TestDigestsChange(t *testing.T) {
	vf := loadVectors(t)
	for _, name := range []string{"project-full", "grant-advice-floats"} {
		t.Run(name, func(t *testing.T) { digestsChange(t, vf, name) })
	}
}

func digestsChange(t *testing.T, vf vectorFile, name string) {
	v := vf.vectors[name]
	if v == nil {
		t.Fatalf("testdata/records/vectors.json has no %s vector", name)
	}
	base, _ := resultDigest(v.get("result"))
	var walk func(x *jsonValue, path string)
	mutated := 0
	walk = func(x *jsonValue, path string) {
		switch x.kind {
		case jsonObject:
			for _, m := range x.members {
				if path == "" && m.key == "record" {
					continue
				}
				walk(m.value, path+"."+m.key)
			}
		case jsonArray:
			for i, item := range x.items {
				walk(item, indexed(path, i))
			}
		case jsonString:
			old := x.text
			x.text = old + "x"
			if x.text == "x" || path == ".outcome" || path == ".kind" || path == ".isolation" {
				x.text = old + "y"
			}
			got, err := resultDigest(v.get("result"))
			x.text = old
			if err == nil && got == base {
				t.Errorf("changing %s left the result digest unchanged", path)
			}
			mutated++
		case jsonBool:
			x.boolean = !x.boolean
			got, _ := resultDigest(v.get("result"))
			x.boolean = !x.boolean
			if got == base {
				t.Errorf("changing %s left the result digest unchanged", path)
			}
			mutated++
		case jsonNumber:
			old := x.text
			x.text = "7" + old
			got, _ := resultDigest(v.get("result"))
			x.text = old
			if got == base {
				t.Errorf("changing %s left the result digest unchanged", path)
			}
			mutated++
		}
	}
	walk(v.get("result"), "")
	if mutated < 10 {
		t.Errorf("only %d leaves mutated", mutated)
	}
}

func TestFloatEncoding(t *testing.T) {
	cases := map[string]string{"1.5": "3ff8000000000000", "-0.0": "8000000000000000",
		`"Infinity"`: "7ff0000000000000", `"-Infinity"`: "fff0000000000000",
		`"NaN"`: "7ff8000000000000", "5e-324": "0000000000000001", "5": "4014000000000000"}
	for text, want := range cases {
		v, err := parseJSON([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		f, err := asFloat(v, "x")
		if err != nil {
			t.Fatal(err)
		}
		e := encoder{}
		e.float("", f)
		if got := hex.EncodeToString(e.buf[len(e.buf)-8:]); got != want {
			t.Errorf("%s encodes as %s, want %s", text, got, want)
		}
	}
	if !math.Signbit(mustFloat(t, "-0.0")) {
		t.Error("-0.0 lost its sign")
	}
}

func mustFloat(t *testing.T, text string) float64 {
	v, _ := parseJSON([]byte(text))
	f, err := asFloat(v, "x")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestParserRefuses(t *testing.T) {
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":"\ud800"}`, "\"\xff\"", `[1,]`, `01`, `{"a":1} x`, `"\u00"`} {
		if _, err := parseJSON([]byte(bad)); err == nil {
			t.Errorf("parseJSON(%q) passed", bad)
		}
	}
	v, err := parseJSON([]byte(`{"a":"\ud83d\ude00\u0000\n","b":[true,false,null,-12,1.5e3]}`))
	if err != nil {
		t.Fatal(err)
	}
	if v.get("a").text != "😀\x00\n" {
		t.Errorf("decoded %q", v.get("a").text)
	}
}

// TestImageDigest: image is encoded right after grant_profile, and only when named: absent, null
// and "" give the digest of a request without one; a name changes it, and a non-string is refused.
func TestImageDigest(t *testing.T) {
	vf := loadVectors(t)
	v := vf.vectors["python-named-image"]
	if v == nil {
		t.Fatal("testdata/records/vectors.json has no python-named-image vector")
	}
	req := v.get("request")
	code := wantString(t, req.get("python"), "code")
	e := newEncoder(domainRequest)
	e.integer("protocol", 1)
	e.str("minimum_isolation", "")
	e.integer("timeout_ms", 0)
	e.str("grant_profile", "")
	e.str("image", "data")
	e.integer("payloads", 1)
	e.str("kind", "python")
	e.str("python.code", code)
	if got, want := e.sum(), wantString(t, v, "request_sha256"); got != want {
		t.Fatalf("image after grant_profile: %s, the vector says %s", got, want)
	}

	digest := func(json string) (string, error) {
		t.Helper()
		tree, err := parseJSON([]byte(json))
		if err != nil {
			t.Fatal(err)
		}
		return requestDigest(tree)
	}
	mustDigest := func(json string) string {
		t.Helper()
		d, err := digest(json)
		if err != nil {
			t.Fatalf("%s: %v", json, err)
		}
		return d
	}
	none := mustDigest(`{"protocol":1,"python":{"code":"1"}}`)
	for _, same := range []string{`{"protocol":1,"image":"","python":{"code":"1"}}`,
		`{"protocol":1,"image":null,"python":{"code":"1"}}`} {
		if got := mustDigest(same); got != none {
			t.Errorf("%s: %s, want the digest without an image %s", same, got, none)
		}
	}
	data := mustDigest(`{"protocol":1,"image":"data","python":{"code":"1"}}`)
	if data == none {
		t.Error("naming an image left the request digest unchanged")
	}
	if other := mustDigest(`{"protocol":1,"image":"base","python":{"code":"1"}}`); other == data || other == none {
		t.Error("another image name gave the same request digest")
	}
	for _, bad := range []string{`{"protocol":1,"image":7,"python":{"code":"1"}}`,
		`{"protocol":1,"image":["data"],"python":{"code":"1"}}`,
		`{"protocol":1,"image":{"name":"data"},"python":{"code":"1"}}`} {
		if _, err := digest(bad); err == nil {
			t.Errorf("%s has a request digest", bad)
		}
	}

	// The same through Request: an empty Image is no image at all.
	requestSum := func(r Request) string {
		t.Helper()
		body, err := r.marshal()
		if err != nil {
			t.Fatal(err)
		}
		return mustDigest(string(body))
	}
	python := &Code{Code: []byte(code)}
	env := wantString(t, req, "environment")
	if got := requestSum(Request{Environment: env, Image: "data", Python: python}); got != wantString(t, v, "request_sha256") {
		t.Errorf("Request{Image: \"data\"} digests to %s, the vector says %s", got, wantString(t, v, "request_sha256"))
	}
	if requestSum(Request{Python: python, Image: ""}) != requestSum(Request{Python: python}) {
		t.Error("an empty Image changed the request digest")
	}
	if requestSum(Request{Python: python, Image: "data"}) == requestSum(Request{Python: python}) {
		t.Error("Image \"data\" left the request digest unchanged")
	}
}

// TestBrokerRoutes: the broker summary's call trace rows and routes_dropped (docs/run-records.md
// §3.2 row 16) are read, covered by the result digest after broker.denied, and [] and 0 when
// absent; a malformed row, or more than MaxBrokerRoutes of them, is not read.
func TestBrokerRoutes(t *testing.T) {
	vf := loadVectors(t)
	v := vf.vectors["grant-advice-floats"]
	unused := vf.vectors["grant-unused"]
	if v == nil || unused == nil {
		t.Fatal("testdata/records/vectors.json lacks grant-advice-floats or grant-unused")
	}
	res, err := checkAnswer(v.get("request"), v.get("result"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := &Broker{Profile: "crm-read", Calls: 12, Denied: 1, RoutesDropped: 2, Routes: []BrokerRoute{
		{Method: "GET", Route: "/v1/items/*", Status: 200, Allowed: true, Count: 10},
		{Method: "GET", Route: "/v1/items/*", Status: 404, Allowed: true, Count: 1},
		{Method: "OTHER", Status: 0, Allowed: false, Reason: "not_allowed", Count: 1},
	}}
	if !reflect.DeepEqual(res.Broker, want) {
		t.Errorf("Broker = %+v, want %+v", res.Broker, want)
	}
	res, err = checkAnswer(unused.get("request"), unused.get("result"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (&Broker{}); !reflect.DeepEqual(res.Broker, want) {
		t.Errorf("Broker = %+v, want %+v", res.Broker, want)
	}

	// withBroker is grant-unused's answer with its broker members replaced (a nil value drops one).
	withBroker := func(members map[string]string) *jsonValue {
		t.Helper()
		tree, err := parseJSON([]byte(`{"profile":"","calls":0,"denied":0,"routes":[],"routes_dropped":0}`))
		if err != nil {
			t.Fatal(err)
		}
		var kept []jsonMember
		for _, m := range tree.members {
			if text, ok := members[m.key]; ok {
				if text == "" {
					continue
				}
				if m.value, err = parseJSON([]byte(text)); err != nil {
					t.Fatal(err)
				}
			}
			kept = append(kept, m)
		}
		tree.members = kept
		answer := *unused.get("result")
		answer.members = append([]jsonMember(nil), answer.members...)
		for i := range answer.members {
			if answer.members[i].key == "broker" {
				answer.members[i].value = tree
			}
		}
		return &answer
	}
	sum := func(answer *jsonValue) string {
		t.Helper()
		d, err := resultDigest(answer)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	base := wantString(t, unused, "result_sha256")
	for _, absent := range []map[string]string{{"routes": ""}, {"routes_dropped": ""},
		{"routes": "", "routes_dropped": ""}, {"routes": "null", "routes_dropped": "null"}} {
		if got := sum(withBroker(absent)); got != base {
			t.Errorf("%v: %s, want the digest with [] and 0 %s", absent, got, base)
		}
	}
	if sum(withBroker(map[string]string{"routes_dropped": "1"})) == base {
		t.Error("routes_dropped 1 left the result digest unchanged")
	}

	// The rows follow broker.denied, field by field.
	row := `{"method":"GET","route":"/items/*","status":200,"allowed":true,"reason":"","count":12}`
	e := newEncoder(domainResult)
	result := unused.get("result")
	for _, k := range [...]string{"provider", "isolation", "environment", "kind"} {
		e.str(k, wantString(t, result, k))
	}
	e.integer("exit_code", 0)
	e.boolean("timed_out", false)
	e.str("stdout", "")
	e.str("stderr", "")
	e.boolean("stdout_truncated", false)
	e.boolean("stderr_truncated", false)
	duration, _ := asInt(result.get("duration_ms"), "duration_ms")
	e.integer("duration_ms", duration)
	e.integer("steps", 0)
	e.integer("artifacts", 0)
	e.str("broker.profile", "")
	e.integer("broker.calls", 0)
	e.integer("broker.denied", 0)
	e.integer("broker.routes", 1)
	e.str("broker.route.method", "GET")
	e.str("broker.route.route", "/items/*")
	e.integer("broker.route.status", 200)
	e.boolean("broker.route.allowed", true)
	e.str("broker.route.reason", "")
	e.integer("broker.route.count", 12)
	e.integer("broker.routes_dropped", 3)
	e.integer("advice", 0)
	if got, want := sum(withBroker(map[string]string{"routes": "[" + row + "]", "routes_dropped": "3"})), e.sum(); got != want {
		t.Errorf("the rows after broker.denied: %s, want %s", got, want)
	}

	rows := make([]string, MaxBrokerRoutes+1)
	for i := range rows {
		rows[i] = row
	}
	for _, bad := range []map[string]string{
		{"routes": "[" + strings.Join(rows, ",") + "]"},
		{"routes": row}, {"routes": `["GET"]`},
		{"routes": `[{"method":"GET","route":"","status":200,"allowed":true,"reason":""}]`},
		{"routes": strings.Replace("["+row+"]", `"status":200`, `"status":"200"`, 1)},
		{"routes": strings.Replace("["+row+"]", `"allowed":true`, `"allowed":"true"`, 1)},
		{"routes": strings.Replace("["+row+"]", `"method":"GET"`, `"method":null`, 1)},
		{"routes": strings.Replace("["+row+"]", `"count":12`, `"count":1.5`, 1)},
		{"routes_dropped": `"2"`}, {"routes_dropped": "true"},
	} {
		if _, err := decodeResult(withBroker(bad)); err == nil || !strings.Contains(err.Error(), "broker.routes") {
			t.Errorf("%.60v: read (%v)", bad, err)
		}
	}
	if _, err := decodeResult(withBroker(map[string]string{"routes": "[" + strings.Join(rows[:MaxBrokerRoutes], ",") + "]"})); err != nil {
		t.Errorf("%d rows: %v", MaxBrokerRoutes, err)
	}
}
