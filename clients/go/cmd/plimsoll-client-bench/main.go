// Command plimsoll-client-bench measures the Go client on the embedded daemon (bench/run.py
// calls it): the p50 of RunJavascript("console.log(6*7)") through the client, of a raw HTTP POST
// /v1/runs with the same body made with net/http alone (a fresh Plimsoll-Request-Id each, keep-alive
// in both), their difference, and of a session RunCell("javascript", "1+1") round trip. Warm-up
// runs are excluded. It prints one JSON line.
//
//	plimsoll-client-bench --url http://127.0.0.1:8470 --runs 200
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"time"

	"plimsoll.dev/client"
)

const code = "console.log(6*7)"

func p50(samples []time.Duration) float64 {
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	return float64(samples[len(samples)/2].Nanoseconds()) / 1e6
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "plimsoll-client-bench: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	url := flag.String("url", "http://127.0.0.1:8470", "the embedded daemon")
	runs := flag.Int("runs", 200, "measured runs per series")
	warmup := flag.Int("warmup", 20, "runs excluded before each series")
	flag.Parse()
	if *runs < 1 {
		fail("--runs must be at least 1")
	}
	ctx := context.Background()
	c, err := plimsoll.New(*url)
	if err != nil {
		fail("%v", err)
	}
	defer c.Close()

	body := []byte(`{"protocol":1,"javascript":{"code":"console.log(6*7)"}}`)
	raw := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}
	rawOnce := func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, *url+"/v1/runs", bytes.NewReader(body))
		if err != nil {
			return err
		}
		var id [16]byte
		_, _ = rand.Read(id[:])
		req.Header.Set("Plimsoll-Request-Id", hex.EncodeToString(id[:]))
		req.Header.Set("Content-Type", "application/json")
		resp, err := raw.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.ReadAll(resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("raw POST answered %d", resp.StatusCode)
		}
		return nil
	}
	clientOnce := func() error {
		r, err := c.RunJavascript(ctx, code)
		if err == nil && r.StdoutText() != "42\n" {
			err = fmt.Errorf("stdout %q", r.StdoutText())
		}
		return err
	}
	session, err := c.OpenSession(ctx, plimsoll.SessionOptions{})
	if err != nil {
		fail("open session: %v", err)
	}
	cellOnce := func() error {
		r, err := session.RunCell(ctx, "javascript", "1+1")
		if err == nil && r.ValueText() != "2" {
			err = fmt.Errorf("value %q", r.ValueText())
		}
		return err
	}
	measure := func(name string, once func() error) []time.Duration {
		for i := 0; i < *warmup; i++ {
			if err := once(); err != nil {
				fail("%s: %v", name, err)
			}
		}
		samples := make([]time.Duration, 0, *runs)
		for i := 0; i < *runs; i++ {
			start := time.Now()
			if err := once(); err != nil {
				fail("%s: %v", name, err)
			}
			samples = append(samples, time.Since(start))
		}
		return samples
	}
	// Interleave the client and raw series in blocks so that drift affects both alike.
	var clientSamples, rawSamples []time.Duration
	block := 25
	for done := 0; done < *runs; done += block {
		n := block
		if *runs-done < n {
			n = *runs - done
		}
		saved := *runs
		*runs = n
		clientSamples = append(clientSamples, measure("client run", clientOnce)...)
		rawSamples = append(rawSamples, measure("raw run", rawOnce)...)
		*runs = saved
		*warmup = 2
	}
	*warmup = 20
	cellSamples := measure("session cell", cellOnce)
	if _, err := session.Close(ctx); err != nil {
		fail("close session: %v", err)
	}
	clientP50, rawP50 := p50(clientSamples), p50(rawSamples)
	line, _ := json.Marshal(struct {
		Client    string  `json:"client"`
		Runs      int     `json:"runs"`
		ClientP50 float64 `json:"client_run_p50_ms"`
		RawP50    float64 `json:"raw_run_p50_ms"`
		Overhead  float64 `json:"overhead_p50_ms"`
		CellP50   float64 `json:"cell_p50_ms"`
	}{"go", len(clientSamples), round(clientP50), round(rawP50), round(clientP50 - rawP50),
		round(p50(cellSamples))})
	fmt.Println(string(line))
}

func round(ms float64) float64 { return float64(int64(ms*1000+0.5*sign(ms))) / 1000 }

func sign(x float64) float64 {
	if x < 0 {
		return -1
	}
	return 1
}
