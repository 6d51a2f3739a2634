package query

import (
	"fmt"
	"slices"
	"strings"
)

// Suggest returns up to limit names of candidates close to name, best first: the same name in
// another case, names that contain it or that it contains (for names of 3 characters or more),
// and names within a small edit distance (a quarter of the name's length, at least 1, at most
// 3), so that a typo or a missing suffix finds the group meant.
func Suggest(name string, candidates []string, limit int) []string {
	type scored struct {
		s     string
		score int
	}
	lname := strings.ToLower(name)
	maxDist := min(max(len(name)/4, 1), 3)
	var out []scored
	seen := map[string]bool{}
	for _, c := range candidates {
		if c == name || seen[c] {
			continue
		}
		seen[c] = true
		lc := strings.ToLower(c)
		switch {
		case lc == lname:
			out = append(out, scored{c, 0})
		case len(lname) >= 3 && (strings.Contains(lc, lname) || strings.Contains(lname, lc) && len(lc) >= 3):
			out = append(out, scored{c, 1 + abs(len(lc)-len(lname))})
		default:
			if d := editDistance(lname, lc, maxDist); d <= maxDist {
				out = append(out, scored{c, 10 + d})
			}
		}
	}
	slices.SortFunc(out, func(a, b scored) int {
		if a.score != b.score {
			return a.score - b.score
		}
		return strings.Compare(a.s, b.s)
	})
	var names []string
	for i := 0; i < len(out) && i < limit; i++ {
		names = append(names, out[i].s)
	}
	return names
}

// UnknownGroupError is a --group that names no group of the input at the asked point, with the
// names close to it.
type UnknownGroupError struct {
	Group    string
	Where    string // e.g. "in the input at the end of the log", "in the records read"
	Suggests []string
}

func (e *UnknownGroupError) Error() string {
	s := fmt.Sprintf("no group %q %s", e.Group, e.Where)
	if len(e.Suggests) > 0 {
		quoted := make([]string, len(e.Suggests))
		for i, q := range e.Suggests {
			quoted[i] = fmt.Sprintf("%q", q)
		}
		s += "; did you mean " + strings.Join(quoted, ", ") + "?"
	} else {
		s += " (replay groups lists them)"
	}
	return s
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// editDistance is the edit distance of a and b where swapping two adjacent characters counts
// as one edit, as inserting, deleting or replacing one does (the optimal string alignment
// distance: "wdie" is 1 from "wide"), or limit+1 as soon as it must exceed limit.
func editDistance(a, b string, limit int) int {
	if abs(len(a)-len(b)) > limit {
		return limit + 1
	}
	prev2 := make([]int, len(b)+1) // the row before prev, for transpositions
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
