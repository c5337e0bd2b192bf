// Command plimsoll-client-bench measures the Go client's overhead (bench/run.py calls it).
package main

func main() {}
