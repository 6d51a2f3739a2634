package query

import (
	"fmt"
	"strings"

	"github.com/coordlog/coordlog/replay/explain"
)

// RebalanceTally sums up a group's rebalances, as a timeline's summary ends: how many, for
// which causes (a member that left without the log telling how counted as gone, left or
// fenced), how many were superseded before converging or had not converged at the end, and
// the longest.
type RebalanceTally struct {
	Rebalances, Open, Superseded int
	causes                       map[string]int
	order                        []string // the causes, in the order they first came
	longest                      *explain.Rebalance
}

// Add counts ev when it is the end of a rebalance (explain.KindRebalanceEnd).
func (t *RebalanceTally) Add(ev *explain.Event) {
	r := ev.Rebalance
	if ev.Kind != explain.KindRebalanceEnd {
		return
	}
	t.Rebalances++
	switch r.Outcome {
	case "open":
		t.Open++
	case "superseded":
		t.Superseded++
	}
	if t.causes == nil {
		t.causes = map[string]int{}
	}
	for _, c := range r.Causes {
		k := c.Kind
		if k == "member-left" && c.Detail == "unknown" {
			k = "member-left-or-fenced"
		}
		if t.causes[k] == 0 {
			t.order = append(t.order, k)
		}
		t.causes[k]++
	}
	if r.DurationMs >= 0 && (t.longest == nil || r.DurationMs > t.longest.DurationMs) {
		t.longest = r
	}
}

// causeWords names a cause kind in the tally, singular and plural.
var causeWords = map[string][2]string{
	"member-joined": {"join", "joins"}, "member-left": {"leave", "leaves"}, "member-fenced": {"member fenced", "members fenced"},
	"member-left-or-fenced": {"member gone (left or fenced)", "members gone (left or fenced)"},
	"member-replaced":       {"static member replaced", "static members replaced"},
	"subscription-changed":  {"subscription change", "subscription changes"}, "topology-changed": {"topology change", "topology changes"},
	"topology-validated": {"topology validated", "topologies validated"}, "regex-resolved": {"regex resolution", "regex resolutions"},
	"metadata-changed":             {"topic metadata change", "topic metadata changes"},
	"assignment-configs-changed":   {"assignment configs change", "assignment configs changes"},
	"share-partitions-initialized": {"share partitions initialized", "share partitions initialized"},
	"group-converted":              {"conversion", "conversions"}, "cooperative-second-round": {"cooperative second round", "cooperative second rounds"},
	"rejoin": {"rejoin without a member change", "rejoins without a member change"}, "unknown": {"unknown cause", "unknown causes"},
}

// String says it in one sentence: how many rebalances, then their causes counted, the
// superseded and unconverged ones, and the longest with its epoch.
func (t *RebalanceTally) String() string {
	var parts []string
	for _, k := range t.order {
		w, ok := causeWords[k]
		if !ok {
			w = [2]string{k, k}
		}
		if t.causes[k] == 1 {
			parts = append(parts, "1 "+w[0])
		} else {
			parts = append(parts, fmt.Sprintf("%d %s", t.causes[k], w[1]))
		}
	}
	s := fmt.Sprintf("%d rebalances: ", t.Rebalances)
	if t.Rebalances == 1 {
		s = "1 rebalance: "
	}
	s += strings.Join(parts, ", ")
	if t.Superseded > 0 {
		s += fmt.Sprintf("; %d superseded before converging", t.Superseded)
	}
	if t.Open > 0 {
		s += fmt.Sprintf("; %d not converged at the end", t.Open)
	}
	if t.longest != nil && t.longest.DurationMs > 0 {
		s += fmt.Sprintf("; the longest took %s (epoch %d)", explain.Duration(t.longest.DurationMs), t.longest.Epoch)
	}
	return s
}
