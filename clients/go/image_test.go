package plimsoll

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// TestImageRequestJSON: Image travels as "image" after "environment", only when non-empty, and
// must be UTF-8 like the other text fields (its name rules are the daemon's to check).
func TestImageRequestJSON(t *testing.T) {
	python := &Code{Code: []byte("print(1)")}
	cases := []struct {
		request Request
		want    string
	}{
		{Request{Python: python}, `{"protocol":1,"python":{"code":"print(1)"}}`},
		{Request{Python: python, Image: ""}, `{"protocol":1,"python":{"code":"print(1)"}}`},
		{Request{Python: python, Image: "data"}, `{"protocol":1,"image":"data","python":{"code":"print(1)"}}`},
		{Request{Python: python, GrantProfile: "crm-read", Environment: "sha256:ab", Image: "data"},
			`{"protocol":1,"grant_profile":"crm-read","environment":"sha256:ab","image":"data","python":{"code":"print(1)"}}`},
		{applyRunOptions(&Request{Python: python}, []RunOption{Image("data-2")}),
			`{"protocol":1,"image":"data-2","python":{"code":"print(1)"}}`},
	}
	for _, c := range cases {
		got, err := c.request.marshal()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("marshal:\n got %s\nwant %s", got, c.want)
		}
	}
	if _, err := (&Request{Python: python, Image: "\xff"}).marshal(); err == nil ||
		!strings.Contains(err.Error(), "image") {
		t.Errorf("an image that is not UTF-8: %v", err)
	}
}

const describeWithImages = `{"protocol":1,"provider":"linux","tier":"container","claimed_tier":"container",
"environment":"sha256:base","evidence":null,
"capabilities":{"payloads":["javascript","python","project","cell"],"languages":["javascript","python"],
"projects":true,"sessions":true,"grants":false},"limits":{"memory_bytes":268435456},
"sessions":{"enabled":true},"details":[],
"images":[
 {"name":"default","default":true,"environment":"sha256:base","tier":"container","confirmed":true,
  "languages":["javascript","python"],"packages":[]},
 {"name":"data","default":false,"environment":"sha256:data","tier":"unknown","confirmed":false,
  "languages":["javascript","python","node"],
  "packages":[{"name":"python3-numpy","version":"1:1.26.4+ds-6","source":"debian"},
   {"name":"numpy","version":"1.26.4","source":"python"},{"name":"lodash","version":"4.17.21","source":"npm"}]}]}`

func parseDescription(t *testing.T, body string) (*Description, error) {
	t.Helper()
	tree, err := parseJSON([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return decodeDescription(tree)
}

func TestDescribeImages(t *testing.T) {
	d, err := parseDescription(t, describeWithImages)
	if err != nil {
		t.Fatal(err)
	}
	want := []ImageInfo{
		{Name: "default", Default: true, Environment: "sha256:base", Tier: TierContainer, Confirmed: true,
			Languages: []string{"javascript", "python"}},
		{Name: "data", Environment: "sha256:data", Tier: TierUnknown, Languages: []string{"javascript", "python", "node"},
			Packages: []ImagePackage{{Name: "python3-numpy", Version: "1:1.26.4+ds-6", Source: PackageDebian},
				{Name: "numpy", Version: "1.26.4", Source: PackagePython},
				{Name: "lodash", Version: "4.17.21", Source: PackageNPM}}},
	}
	if !reflect.DeepEqual(d.Images, want) {
		t.Errorf("Images:\n got %+v\nwant %+v", d.Images, want)
	}

	// A daemon that does not list its images (an older one): no images, no error.
	older := describeWithImages[:strings.Index(describeWithImages, `,
"images"`)] + "}"
	d, err = parseDescription(t, older)
	if err != nil {
		t.Fatal(err)
	}
	if d.Images != nil {
		t.Errorf("Images without the field: %+v", d.Images)
	}

	// Every field of an entry is read as strictly as the rest of describe.
	for _, bad := range [][2]string{
		{`"images":[`, `"images":{},"x":[`},
		{`{"name":"default"`, `7,{"name":"default"`},
		{`"name":"data"`, `"name":7`},
		{`"name":"data",`, ``},
		{`"default":true`, `"default":"true"`},
		{`"default":false,`, ``},
		{`"environment":"sha256:data"`, `"environment":null`},
		{`"tier":"unknown"`, `"tier":3`},
		{`"confirmed":false`, `"confirmed":0`},
		{`"languages":["javascript","python","node"]`, `"languages":"python"`},
		{`"languages":["javascript","python","node"]`, `"languages":["javascript",1]`},
		{`"packages":[]`, `"packages":{}`},
		{`{"name":"numpy"`, `"numpy",{"name":"numpy"`},
		{`"version":"1.26.4",`, ``},
		{`"source":"npm"`, `"source":false`},
	} {
		body := strings.Replace(describeWithImages, bad[0], bad[1], 1)
		if body == describeWithImages {
			t.Fatalf("the case %q does not apply", bad[0])
		}
		if _, err := parseDescription(t, body); err == nil {
			t.Errorf("%s -> %s: the describe was read", bad[0], bad[1])
		}
	}
}

// fakeDaemon answers like plimsolld's session endpoints (with the echo) and keeps the bodies sent.
func fakeDaemon(t *testing.T, answers map[string]string) (*Client, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var bodies []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, r.Method+" "+r.URL.Path+" "+string(body))
		mu.Unlock()
		answer, ok := answers[r.Method+" "+r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Plimsoll-Request-Id", r.Header.Get("Plimsoll-Request-Id"))
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(server.Close)
	c, err := New(server.URL, WithToken(""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	sent := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), bodies...)
	}
	return c, sent
}

const testSessionID = "0123456789abcdef0123456789abcdef"

func sessionAnswers(image string) map[string]string {
	identity := `"session_id":"` + testSessionID + `","provider":"linux","isolation":"container",` +
		`"environment":"sha256:data",` + image + `"created_unix_ms":1,"expires_unix_ms":2,"idle_timeout_ms":1`
	return map[string]string{
		"POST /v1/sessions": "{" + identity + `,"limits":{"memory_bytes":1}}`,
		"GET /v1/sessions/" + testSessionID: "{" + identity + `,"calls":0,"busy":false,"queued":false,` +
			`"last_used_unix_ms":1,"disk_used_bytes":0,"disk_bytes":1,"interpreters":[],"last_record_sha256":""}`,
	}
}

// TestSessionImage: SessionOptions.Image is sent only when non-empty, and the image the session
// answers name is read into Session.Image and SessionInfo.Image ("" when absent).
func TestSessionImage(t *testing.T) {
	ctx := context.Background()
	c, sent := fakeDaemon(t, sessionAnswers(`"image":"data",`))
	s, err := c.OpenSession(ctx, SessionOptions{MinimumIsolation: TierContainer, Environment: "sha256:data", Image: "data"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `POST /v1/sessions {"protocol":1,"minimum_isolation":"container","environment":"sha256:data","image":"data"}`; sent()[0] != want {
		t.Errorf("the open sent\n%s\nwant\n%s", sent()[0], want)
	}
	if s.Image != "data" {
		t.Errorf("Session.Image = %q", s.Image)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Image != "data" {
		t.Errorf("SessionInfo.Image = %q", info.Image)
	}

	c, sent = fakeDaemon(t, sessionAnswers(""))
	s, err = c.OpenSession(ctx, SessionOptions{Image: ""})
	if err != nil {
		t.Fatal(err)
	}
	if want := `POST /v1/sessions {"protocol":1}`; sent()[0] != want {
		t.Errorf("the open sent %s, want %s", sent()[0], want)
	}
	if info, err := s.Info(ctx); err != nil || s.Image != "" || info.Image != "" {
		t.Errorf("without an image: %q, %+v, %v", s.Image, info, err)
	}

	c, _ = fakeDaemon(t, sessionAnswers(`"image":7,`))
	if _, err := c.OpenSession(ctx, SessionOptions{Image: "data"}); err == nil ||
		err.(*Error).Code != CodeDataLoss {
		t.Errorf("an image that is not a string: %v", err)
	}
}
