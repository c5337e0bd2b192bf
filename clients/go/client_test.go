package plimsoll_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"plimsoll.dev/client"
)

const testToken = "tok-SECRET-0123456789abcdefghij"

// TestTokenNeverShown prints the client, a pool, options, a session and errors every way fmt
// can, and looks for the token (and the owner key) in the text.
func TestTokenNeverShown(t *testing.T) {
	t.Setenv("PLIMSOLL_TOKEN", "env-"+testToken)
	opts := []plimsoll.Option{plimsoll.WithToken(testToken), plimsoll.WithOwnerKey([]byte("OWNERKEY-" + testToken))}
	c, err := plimsoll.New("http://127.0.0.1:1", opts...)
	if err != nil {
		t.Fatal(err)
	}
	fromEnv, err := plimsoll.New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := plimsoll.NewPool([]string{"http://127.0.0.1:1", "unix:/nonexistent.sock"}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, runErr := c.RunJavascript(ctx, "1")
	if runErr == nil {
		t.Fatal("a run on a closed port succeeded")
	}
	_, poolErr := pool.RunJavascript(ctx, "1")
	_, badToken := plimsoll.New("http://127.0.0.1:1", plimsoll.WithToken(testToken+"\nX-Injected: 1"))
	if badToken == nil {
		t.Fatal("a token with a newline was accepted")
	}
	things := []any{c, fromEnv, pool, opts, opts[0], runErr, poolErr, badToken}
	if embedded, ok := lookupEnv("PLIMSOLL_TEST_EMBEDDED_URL"); ok {
		e, _ := plimsoll.New(embedded, opts...)
		s, err := e.OpenSession(ctx, plimsoll.SessionOptions{Owner: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(ctx)
		r, err := s.RunCell(ctx, "javascript", "1")
		if err != nil {
			t.Fatal(err)
		}
		_, notFound := e.RunJavascript(ctx, "1", plimsoll.GrantProfile("crm-read"))
		things = append(things, e, s, r, notFound)
	}
	for i, thing := range things {
		for _, format := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
			text := fmt.Sprintf(format, thing)
			if strings.Contains(text, "SECRET") || strings.Contains(text, "OWNERKEY") {
				t.Errorf("thing %d printed with %s shows a credential: %s", i, format, text)
			}
		}
	}
}

func refusedWith(t *testing.T, err error, code string, reason plimsoll.Reason) {
	t.Helper()
	var pe *plimsoll.Error
	if !errors.As(err, &pe) || pe.Code != code || pe.NotDispatched != reason || pe.Ran() != plimsoll.RanNo {
		t.Fatalf("want %s marked %s, got %v", code, reason, err)
	}
	if !errors.Is(err, plimsoll.ErrRefused) || errors.Is(err, plimsoll.ErrDataLoss) {
		t.Fatalf("the kinds of %v are wrong", err)
	}
}

func TestURLs(t *testing.T) {
	for _, bad := range []string{"ftp://x", "http://", "http://u:p@127.0.0.1", "http://127.0.0.1/?q=1",
		"http://127.0.0.1/#f", "http://127.0.0.1:0", "http://127.0.0.1:99999", "unix:relative.sock",
		"http://127.0.0.1/a b", "http://127.0.0.1/%2e%2e"} {
		_, err := plimsoll.New(bad, plimsoll.WithToken(""))
		refusedWith(t, err, plimsoll.CodeInvalidArgument, plimsoll.ReasonRequest)
	}
	for _, good := range []string{"http://127.0.0.1:8470", "http://[::1]:8470/prefix/v-1", "https://example.com",
		"unix:/tmp/x.sock", "unix:///tmp/x.sock", "http://192.0.2.1:8470"} {
		opts := []plimsoll.Option{plimsoll.WithToken("")}
		if strings.Contains(good, "192.0.2.1") {
			opts = append(opts, plimsoll.WithAllowCleartext())
		}
		if _, err := plimsoll.New(good, opts...); err != nil {
			t.Errorf("New(%q): %v", good, err)
		}
	}
	_, err := plimsoll.New("http://192.0.2.1:8470", plimsoll.WithToken(""))
	refusedWith(t, err, plimsoll.CodeFailedPrecondition, plimsoll.ReasonRequest)
	_, err = plimsoll.New("https://127.0.0.1", plimsoll.WithCAFile("/nonexistent/ca.pem"))
	refusedWith(t, err, plimsoll.CodeFailedPrecondition, plimsoll.ReasonRequest)
}

// TestCleartextNameResolved: a name is resolved before connecting, and refused unless every
// address is loopback (the check does not connect).
func TestCleartextNameResolved(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if conn, err := listener.Accept(); err == nil {
			accepted <- struct{}{}
			conn.Close()
		}
	}()
	port := listener.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// "localhost" resolves to loopback: allowed, so it connects (and the listener hangs up:
	// the request left, so it may have run).
	c, _ := plimsoll.New(fmt.Sprintf("http://localhost:%d", port), plimsoll.WithToken(""))
	_, err = c.RunJavascript(ctx, "1")
	var pe *plimsoll.Error
	if !errors.As(err, &pe) || pe.NotDispatched == plimsoll.ReasonRequest {
		t.Fatalf("localhost: %v", err)
	}
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("localhost was not connected to")
	}
}

func TestUnreachableIsCapacity(t *testing.T) {
	listener, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := listener.Addr().String()
	listener.Close()
	c, _ := plimsoll.New("http://"+addr, plimsoll.WithToken(""))
	ctx := context.Background()
	_, err := c.RunJavascript(ctx, "1")
	refusedWith(t, err, plimsoll.CodeFailedPrecondition, plimsoll.ReasonCapacity)
	if !err.(*plimsoll.Error).IsRetryable() {
		t.Fatal("capacity is retryable")
	}
	_, err = c.Describe(ctx)
	refusedWith(t, err, plimsoll.CodeFailedPrecondition, plimsoll.ReasonCapacity)
}

// TestCutAfterSending: a daemon that reads the request and hangs up: data_loss, no mark.
func TestCutAfterSending(t *testing.T) {
	listener, _ := net.Listen("tcp", "127.0.0.1:0")
	defer listener.Close()
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			_, _ = conn.Read(buf)
			conn.Close()
		}
	}()
	c, _ := plimsoll.New("http://"+listener.Addr().String(), plimsoll.WithToken(""))
	_, err := c.RunJavascript(context.Background(), "1")
	var pe *plimsoll.Error
	if !errors.As(err, &pe) || pe.Code != plimsoll.CodeDataLoss || pe.Ran() != plimsoll.RanUnknown || !errors.Is(err, plimsoll.ErrDataLoss) {
		t.Fatalf("want data_loss without a mark, got %v", err)
	}
	// A daemon that never answers: deadline_exceeded, no mark; the context's error is kept.
	silent, _ := net.Listen("tcp", "127.0.0.1:0")
	defer silent.Close()
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
		}
	}()
	c, _ = plimsoll.New("http://"+silent.Addr().String(), plimsoll.WithToken(""))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = c.RunJavascript(ctx, "1")
	if !errors.As(err, &pe) || pe.Code != plimsoll.CodeDeadlineExceeded || pe.NotDispatched != "" {
		t.Fatalf("want deadline_exceeded without a mark, got %v", err)
	}
}

func TestReasons(t *testing.T) {
	retryable := map[plimsoll.Reason]bool{plimsoll.ReasonUnsupported: true, plimsoll.ReasonIsolation: true,
		plimsoll.ReasonEnvironment: true, plimsoll.ReasonCapacity: true, plimsoll.ReasonRequest: false,
		plimsoll.ReasonPermission: false, plimsoll.ReasonProtocol: false, plimsoll.ReasonNone: false}
	for reason, want := range retryable {
		if reason.IsRetryable() != want {
			t.Errorf("%q.IsRetryable() = %v", reason, !want)
		}
	}
	if plimsoll.RanNo.String() != "false" || plimsoll.RanUnknown.String() != "unknown" || plimsoll.RanYes.String() != "true" {
		t.Error("Ran's strings")
	}
	if !plimsoll.TierMeets("vm", "kernel") || plimsoll.TierMeets("process", "container") ||
		plimsoll.TierMeets("unknown", "process") || plimsoll.TierMeets("vm", "bogus") || !plimsoll.TierMeets("none", "") {
		t.Error("TierMeets")
	}
}

// TestKeepAlive: many runs on one client use one connection.
func TestKeepAlive(t *testing.T) {
	url := plimsoll.HarnessEnv(t, "PLIMSOLL_TEST_EMBEDDED_URL")
	c, _ := plimsoll.New(url, plimsoll.WithToken(""))
	defer c.Close()
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		if _, err := c.RunJavascript(ctx, "console.log(1)"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Describe(ctx); err != nil {
		t.Fatal(err)
	}
	if n := c.ConnectionsOpened(); n != 1 {
		t.Fatalf("21 calls opened %d connections", n)
	}
}

// TestBytesTravel: non-UTF-8 code travels as base64 and the request digest covers the bytes.
func TestBytesTravel(t *testing.T) {
	url := plimsoll.HarnessEnv(t, "PLIMSOLL_TEST_EMBEDDED_URL")
	c, _ := plimsoll.New(url, plimsoll.WithToken(""))
	r, err := c.RunJavascript(context.Background(), "console.log('\xff'.length) // \xfe")
	if err != nil {
		t.Fatal(err)
	}
	if r.Record.RequestSHA256 == "" || r.Ran() != plimsoll.RanYes {
		t.Fatal("no record")
	}
}

// TestPostNeverResent: a POST written on a kept connection that then dies is reported (data_loss)
// and never re-sent on a fresh connection, though net/http retries idempotent requests there.
func TestPostNeverResent(t *testing.T) {
	listener, _ := net.Listen("tcp", "127.0.0.1:0")
	defer listener.Close()
	posts := make(chan string, 10)
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			go func(conn net.Conn) {
				defer conn.Close()
				buf := make([]byte, 8192)
				for {
					n, err := conn.Read(buf)
					if err != nil {
						return
					}
					request := string(buf[:n])
					if strings.HasPrefix(request, "POST ") {
						posts <- request
						return // read it, then hang up without an answer
					}
					// Any GET: a complete answer on a kept connection (no echo: data_loss).
					_, _ = conn.Write([]byte("HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\n{}"))
				}
			}(conn)
		}
	}()
	c, _ := plimsoll.New("http://"+listener.Addr().String(), plimsoll.WithToken(""))
	ctx := context.Background()
	if _, err := c.Describe(ctx); !errors.Is(err, plimsoll.ErrDataLoss) {
		t.Fatalf("describe: %v", err)
	}
	_, err := c.RunJavascript(ctx, "1")
	if !errors.Is(err, plimsoll.ErrDataLoss) || err.(*plimsoll.Error).Ran() != plimsoll.RanUnknown {
		t.Fatalf("want data_loss, got %v", err)
	}
	if c.ConnectionsOpened() != 1 {
		t.Fatalf("the POST did not go on the kept connection (%d connections)", c.ConnectionsOpened())
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(posts); n != 1 {
		t.Fatalf("the POST reached the server %d times", n)
	}
}
