package input_test

import (
	"fmt"
	"log"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/input"
)

// Open whatever a user gives: here a broker's log directory (its partitions are the
// __consumer_offsets-N directories in it).
func ExampleOpen() {
	in, err := input.Open("../../fixtures/real/share", eventlog.Strict)
	if err != nil {
		log.Fatal(err)
	}
	defer in.Close()
	parts, err := in.Partitions()
	if err != nil {
		log.Fatal(err)
	}
	first, next, err := in.Offsets(parts[0])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s with partitions %v; partition %d holds offsets %d to %d\n", in.Kind, parts, parts[0], first, next-1)
	for _, w := range in.Report().Warnings() {
		fmt.Println("warning:", w)
	}
	// Output:
	// log directory with partitions [0]; partition 0 holds offsets 0 to 25
	// warning: ../../fixtures/real/share/driver.log: not a segment file (this is a log directory), ignored
}
