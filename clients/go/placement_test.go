package plimsoll_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"plimsoll.dev/client"
)

// TestPlacement runs a Pool against the harness's three daemons (embedded; linux or a second
// embedded; disabled), stopping the first one mid-test.
func TestPlacement(t *testing.T) {
	urls := strings.Split(plimsoll.HarnessEnv(t, "PLIMSOLL_TEST_PLACEMENT_URLS"), ",")
	pid, err := strconv.Atoi(plimsoll.HarnessEnv(t, "PLIMSOLL_TEST_PLACEMENT_STOP_PID"))
	if err != nil || len(urls) != 3 {
		t.Fatalf("PLIMSOLL_TEST_PLACEMENT_URLS must list three daemons and the pid be a number")
	}
	_, linux := lookupEnv("PLIMSOLL_TEST_LINUX_URL")
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			t.Fatalf("stopping the first daemon: %v", err)
		}
		waitRefused(t, urls[0])
		// The daemon's hang-up reaches the client's idle connections asynchronously; a request
		// written on one in that instant is data_loss (it left: the client cannot know it did not
		// run), which is the contract but not what this test is about.
		time.Sleep(300 * time.Millisecond)
	}
	t.Cleanup(stop) // the harness expects the first daemon stopped, whatever failed before
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	pool, err := plimsoll.NewPool(urls, plimsoll.WithToken(""), plimsoll.WithDescribeTTL(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	// No floor: the first daemon takes it.
	r, err := pool.RunJavascript(ctx, "console.log('first')")
	if err != nil || r.URL != urls[0] || r.StdoutText() != "first\n" {
		t.Fatalf("javascript without a floor: %v %+v", err, r)
	}
	// Python and a container floor: only linux (when it runs) takes them.
	r, err = pool.RunPython(ctx, "print('py')")
	if linux {
		if err != nil || r.URL != urls[1] || r.Provider != "linux" || r.StdoutText() != "py\n" {
			t.Fatalf("python: %v %+v", err, r)
		}
		r, err = pool.RunJavascript(ctx, "console.log(1)", plimsoll.MinimumIsolation("container"))
		if err != nil || r.URL != urls[1] || r.Isolation != "container" {
			t.Fatalf("javascript at container: %v %+v", err, r)
		}
	} else if !errors.Is(err, plimsoll.ErrRefused) || err.(*plimsoll.Error).NotDispatched != plimsoll.ReasonUnsupported {
		t.Fatalf("python with no linux daemon: want a refusal unsupported, got %v", err)
	}
	// A floor no daemon meets: refused isolation, nothing ran.
	_, err = pool.RunJavascript(ctx, "console.log(1)", plimsoll.MinimumIsolation("vm"))
	var pe *plimsoll.Error
	if !errors.As(err, &pe) || pe.NotDispatched != plimsoll.ReasonIsolation || pe.Ran() != plimsoll.RanNo {
		t.Fatalf("vm floor: want a refusal isolation, got %v", err)
	}
	// The disabled daemon alone: its describe says it runs nothing.
	disabled, err := plimsoll.NewPool(urls[2:], plimsoll.WithToken(""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := disabled.RunJavascript(ctx, "1"); !errors.As(err, &pe) || pe.NotDispatched != plimsoll.ReasonUnsupported || !pe.IsRetryable() {
		t.Fatalf("disabled: want unsupported, got %v", err)
	}

	// A session opened on the first daemon stays there.
	session, err := pool.OpenSession(ctx, plimsoll.SessionOptions{})
	if err != nil || session.Client().URL() != urls[0] {
		t.Fatalf("open session: %v", err)
	}
	if r, err := session.RunCell(ctx, "javascript", "let kept = 5"); err != nil || r.ExitCode != 0 {
		t.Fatalf("cell: %v", err)
	}

	stop()

	// The pinned session does not move: its daemon cannot be reached (nothing was sent).
	_, err = session.RunCell(ctx, "javascript", "kept")
	if !errors.As(err, &pe) || pe.NotDispatched != plimsoll.ReasonCapacity || session.Client().URL() != urls[0] {
		t.Fatalf("session call after its daemon stopped: want capacity on the same daemon, got %v", err)
	}
	// The cached describe still lists the stopped daemon: the call is refused capacity there
	// (it cannot be reached) and placed on the next one.
	r, err = pool.RunJavascript(ctx, "console.log('moved')")
	if err != nil || r.URL != urls[1] || r.StdoutText() != "moved\n" {
		t.Fatalf("after the stop: %v %+v", err, r)
	}
	// A pool without a cache re-describes: the stopped daemon is skipped the same way.
	fresh, err := plimsoll.NewPool(urls, plimsoll.WithToken(""), plimsoll.WithDescribeTTL(0))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := fresh.RunJavascript(ctx, "console.log(2)"); err != nil || r.URL != urls[1] {
		t.Fatalf("fresh pool after the stop: %v", err)
	}
	// Only the stopped daemon: capacity, retryable, nothing ran.
	alone, _ := plimsoll.NewPool(urls[:1], plimsoll.WithToken(""))
	if _, err := alone.RunJavascript(ctx, "1"); !errors.As(err, &pe) || pe.NotDispatched != plimsoll.ReasonCapacity || pe.Ran() != plimsoll.RanNo {
		t.Fatalf("stopped daemon alone: want capacity, got %v", err)
	}
}

// TestPlacementMovesOnlyOnEchoedRetryableRefusals uses the adversarial proxy: a refusal marked
// isolation with a correct echo moves the call on; a refusal whose echo was dropped does not.
func TestPlacementMovesOnlyOnEchoedRetryableRefusals(t *testing.T) {
	adversary := plimsoll.HarnessEnv(t, "PLIMSOLL_TEST_ADVERSARY_URL")
	embedded := plimsoll.HarnessEnv(t, "PLIMSOLL_TEST_EMBEDDED_URL")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pool, err := plimsoll.NewPool([]string{adversary + "/refuse_isolation/placement", embedded},
		plimsoll.WithToken(""))
	if err != nil {
		t.Fatal(err)
	}
	r, err := pool.RunJavascript(ctx, "console.log('second')")
	if err != nil || r.URL != embedded || r.StdoutText() != "second\n" {
		t.Fatalf("after an echoed isolation refusal: %v %+v", err, r)
	}
	pool, _ = plimsoll.NewPool([]string{adversary + "/drop_echo/placement", embedded}, plimsoll.WithToken(""))
	_, err = pool.RunJavascript(ctx, "console.log(1)")
	if !errors.Is(err, plimsoll.ErrDataLoss) {
		t.Fatalf("an answer without the echo must stop placement with data_loss, got %v", err)
	}
}

func waitRefused(t *testing.T, raw string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		conn, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err != nil {
			return
		}
		conn.Close()
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s still accepts connections after SIGTERM", raw)
}
