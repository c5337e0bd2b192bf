package plimsoll_test

// Examples for the package documentation. They are compiled (and so type-checked) by go test;
// they need a daemon, so they carry no Output comment: README.md's examples, which
// TestReadmeExamples runs against a real daemon, are the ones that are executed.

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"plimsoll.dev/client"
)

func daemonURL() string {
	if url := os.Getenv("PLIMSOLL_URL"); url != "" {
		return url
	}
	return "http://127.0.0.1:8470"
}

func ExampleClient_RunJavascript() {
	c, err := plimsoll.New(daemonURL())
	if err != nil {
		log.Fatal(err)
	}
	r, err := c.RunJavascript(context.Background(), "console.log(6*7)",
		plimsoll.MinimumIsolation("process"), plimsoll.Timeout(5*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(r.StdoutText())
}

func ExampleClient_OpenSession() {
	c, err := plimsoll.New(daemonURL())
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	s, err := c.OpenSession(ctx, plimsoll.SessionOptions{IdleTimeout: time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close(ctx)
	r, err := s.RunCell(ctx, "javascript", "[1, 2].map(x => x * 2)")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.ValueText(), r.InterpreterStarted)
}

func ExampleClient_RunProject() {
	c, err := plimsoll.New(daemonURL())
	if err != nil {
		log.Fatal(err)
	}
	r, err := c.RunProject(context.Background(), plimsoll.Project{
		Files:     []plimsoll.File{plimsoll.TextFile("main.py", "open('out.txt','w').write('made')\n")},
		Steps:     [][]string{{"python3", "main.py"}},
		Artifacts: []string{"out.txt"},
	}, plimsoll.MinimumIsolation("container"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Outcome, r.Artifacts[0].ContentText())
}

func ExampleError() {
	c, err := plimsoll.New(daemonURL())
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.RunPython(context.Background(), "print(1)")
	var pe *plimsoll.Error
	if errors.As(err, &pe) {
		// Ran: false (nothing ran: the mark), or unknown (it may have run).
		fmt.Println(pe.Code, pe.NotDispatched, pe.Ran(), pe.IsRetryable())
	}
}

func ExamplePool() {
	pool, err := plimsoll.NewPool([]string{"http://127.0.0.1:8470", "unix:/run/plimsoll/api.sock"})
	if err != nil {
		log.Fatal(err)
	}
	r, err := pool.RunPython(context.Background(), "print('placed')")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.URL, r.StdoutText())
}

func ExampleImage() {
	c, err := plimsoll.New(daemonURL())
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	d, err := c.Describe(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, image := range d.Images {
		fmt.Println(image.Name, image.Default, image.Tier, len(image.Packages))
	}
	r, err := c.RunPython(ctx, "import numpy; print(numpy.arange(3).sum())", plimsoll.Image("data"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(r.StdoutText())
}

func ExampleDisplay() {
	c, err := plimsoll.New(daemonURL())
	if err != nil {
		log.Fatal(err)
	}
	code := "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()\n"
	r, err := c.RunPython(context.Background(), code, plimsoll.Image("data"))
	if err != nil {
		log.Fatal(err)
	}
	for i, d := range r.Displays {
		fmt.Println(d.Mime, d.Width, d.Height, len(d.Data)) // e.g. image/png 640 480 14213
		if d.Mime == "image/png" {
			if err := os.WriteFile(fmt.Sprintf("figure-%d.png", i+1), d.Data, 0o644); err != nil {
				log.Fatal(err)
			}
		}
	}
	if r.DisplaysTruncated {
		fmt.Println("some displays were dropped")
	}
}
