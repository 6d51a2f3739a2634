package audit

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/coordlog/coordlog/replay/explain"
)

// Severity ranks findings: what to look at first.
type Severity string

// Severities, highest first.
const (
	// SeverityHigh: committed offsets changed in a way consumers feel (moved back, written
	// while the group was empty or by no owner, deleted), or the log itself is wrong
	// (violations, damaged input).
	SeverityHigh Severity = "high"
	// SeverityMedium: a member fenced, a slow rebalance, a long or open transaction, a model
	// invariant broken at the end of the log.
	SeverityMedium Severity = "medium"
	// SeverityLow: what repeats without harm (short-lived members of one client fenced again
	// and again).
	SeverityLow Severity = "low"
)

// Severities lists them, highest first.
var Severities = []Severity{SeverityHigh, SeverityMedium, SeverityLow}

// ParseSeverity reads a severity name.
func ParseSeverity(s string) (Severity, error) {
	for _, v := range Severities {
		if string(v) == s {
			return v, nil
		}
	}
	return "", fmt.Errorf("unknown severity %q: give high, medium or low", s)
}

func (s Severity) rank() int {
	switch s {
	case SeverityHigh:
		return 0
	case SeverityMedium:
		return 1
	}
	return 2
}

// AtLeast reports whether s is as severe as min or more.
func (s Severity) AtLeast(min Severity) bool { return s.rank() <= min.rank() }

// severityOf is a finding kind's severity.
func severityOf(kind string) Severity {
	switch kind {
	case KindOffsetRewind, KindOffsetsWhileEmpty, KindCommitWithoutOwner, KindOffsetsDeleted, KindOffsetsOfDeletedGroup,
		KindViolation, KindDamagedInput:
		return SeverityHigh
	case KindMembersFenced:
		return SeverityLow
	}
	return SeverityMedium
}

// KindMembersFenced: many members of one client id and host fenced in one group (console
// consumers, kcat, test clients started and killed again and again), told once with the
// count and the span instead of once each.
const KindMembersFenced = "members-fenced"

// minRepeatedFences is how many fences of one client id and host in one group make them one
// members-fenced finding.
const minRepeatedFences = 3

// finish gives every finding its severity and certainty and sorts them: by severity, then partition and offset (end-of-log
// findings last).
func finish(fs []Finding) []Finding {
	for i := range fs {
		f := &fs[i]
		if f.Severity == "" {
			f.Severity = severityOf(f.Kind)
		}
		if f.Count == 0 {
			f.Count = 1
		}
		if f.Certainty != "" {
			continue
		}
		switch e := f.Event; {
		case e != nil && e.Certainty != "":
			f.Certainty, f.Evidence, f.Alternatives = e.Certainty, e.Evidence, e.Alternatives
		default:
			// What the records show by themselves: a rewind, a slow rebalance, a violation, the
			// state at the end of the log.
			f.Certainty = explain.CertaintyProved
			f.Evidence = []string{provedBy(f)}
		}
	}
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Severity.rank(), b.Severity.rank()), cmp.Compare(a.Partition, b.Partition),
			cmp.Compare(atEnd(a.Offset), atEnd(b.Offset)))
	})
	return fs
}

// provedBy names the records a finding the log shows by itself stands on.
func provedBy(f *Finding) string {
	if f.Offset < 0 {
		return "the state at the end of the log"
	}
	if e := f.Event; e != nil && e.At.LastOffset > e.At.Offset {
		return fmt.Sprintf("the records at offsets %d to %d of partition %d", e.At.Offset, e.At.LastOffset, f.Partition)
	}
	return fmt.Sprintf("the record at offset %d of partition %d", f.Offset, f.Partition)
}

// foldFences turns the member-fenced findings of one group, client id and host, when there
// are minRepeatedFences or more, into one members-fenced finding at the first, with the count
// and the span.
func foldFences(fs []Finding) []Finding {
	type who struct{ group, client, host string }
	key := func(f *Finding) (who, bool) {
		if f.Kind != KindMemberFenced || f.Event == nil || f.Event.Member == nil {
			return who{}, false
		}
		m := f.Event.Member
		return who{f.Group, m.ClientID, m.Host}, true
	}
	count := map[who]int{}
	for i := range fs {
		if k, ok := key(&fs[i]); ok {
			count[k]++
		}
	}
	folded := map[who]int{} // -> index in out
	var out []Finding
	for i := range fs {
		f := fs[i]
		k, ok := key(&f)
		if !ok || count[k] < minRepeatedFences {
			out = append(out, f)
			continue
		}
		j, seen := folded[k]
		if !seen {
			folded[k] = len(out)
			f.Kind, f.Count, f.Severity = KindMembersFenced, 0, SeverityLow
			f.First = f.Event.At
			f.Next = "`replay timeline INPUT --group " + k.group + " --member " + k.client + " --kind member` lists them; then what starts " +
				"this client again and again (a console consumer, kcat, a test) and whether it should share this group.id"
			out = append(out, f)
			j = len(out) - 1
		}
		g := &out[j]
		g.Count++
		g.Last = f.Event.At
		if f.Event.Certainty == explain.CertaintyProved || g.Certainty == "" {
			g.Certainty = f.Event.Certainty
		}
		if f.Event.Removal != nil && f.Event.Removal.Joined != nil && f.Event.At.Timestamp >= 0 {
			if life := f.Event.At.Timestamp - f.Event.Removal.Joined.Timestamp; life > g.longestLife {
				g.longestLife = life
			}
		}
	}
	for i := range out {
		if out[i].Kind == KindMembersFenced {
			out[i].Detail = foldedDetail(&out[i])
			out[i].Event = nil
			out[i].Evidence = []string{"each of them was removed about a session timeout after its last record (timeline lists why for each)"}
			out[i].Alternatives = []explain.Alternative{{Cause: "left", Settle: "the client's log (a close() before exit)"}}
		}
	}
	return out
}

func foldedDetail(f *Finding) string {
	m := f.Event.Member
	who := "client id " + m.ClientID
	if m.Host != "" {
		who += " on host " + m.Host
	}
	s := fmt.Sprintf("%d members of %s were fenced between %s and %s", f.Count, who,
		f.First.Time().Format("2006-01-02T15:04:05.000Z"), f.Last.Time().Format("2006-01-02T15:04:05.000Z"))
	if f.longestLife > 0 {
		s += ", none a member longer than " + explain.Duration(f.longestLife)
	}
	return s + ": short-lived clients started and stopped without a clean close (console consumers, kcat, test clients)"
}

// FilterSeverity keeps the findings at min or above.
func FilterSeverity(fs []Finding, min Severity) []Finding {
	return slices.DeleteFunc(fs, func(f Finding) bool { return !f.Severity.AtLeast(min) })
}

// CertaintyText is a finding's certainty as check's text prints it beside its kind:
// "proved", "likely", "one of several".
func (f *Finding) CertaintyText() string {
	return strings.ReplaceAll(string(f.Certainty), "-", " ")
}

// Notes are the lines check's text adds under a finding's detail: the other causes and what
// would settle each, when the detail (an explained event's text) does not say them already.
func (f *Finding) Notes() []string {
	if e := f.Event; e != nil && e.Certainty != "" && e.Offsets == nil {
		return nil // the event's text says them (a commit's does not)
	}
	var out []string
	for _, a := range f.Alternatives {
		out = append(out, "could be "+explain.CauseWords(a.Cause)+": "+a.Settle+" would tell")
	}
	return out
}
