package query

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Point is a place in the history of an input, as a user names it: the end of the log, the
// record at an offset (one offset for an input of one partition, or an offset per named
// partition, since partitions' offsets are unrelated), or an instant of time (the same instant
// in every partition, each resolving to its own record). The zero Point is the end.
type Point struct {
	kind    pointKind
	offset  int64           // kindOffset
	offsets map[int32]int64 // kindOffsets
	timeMs  int64           // kindTime, Unix milliseconds
}

type pointKind uint8

const (
	kindEnd pointKind = iota
	kindOffset
	kindOffsets
	kindTime
)

// End is the end of the log: every record.
func End() Point { return Point{} }

// AtOffset is the state after the record at offset o (and every earlier one), for an input of
// one partition.
func AtOffset(o int64) Point { return Point{kind: kindOffset, offset: o} }

// AtOffsets is the state after the record at m[p] in each named partition p.
func AtOffsets(m map[int32]int64) Point {
	c := make(map[int32]int64, len(m))
	for p, o := range m {
		c[p] = o
	}
	return Point{kind: kindOffsets, offsets: c}
}

// AtTime is the state at instant t: in each partition, every record stamped at or before t and
// none after the first record stamped later (see Resolve).
func AtTime(t time.Time) Point { return Point{kind: kindTime, timeMs: t.UnixMilli()} }

// AtTimeMillis is AtTime for a Unix millisecond timestamp (Kafka's unit).
func AtTimeMillis(ms int64) Point { return Point{kind: kindTime, timeMs: ms} }

// IsEnd reports whether p is the end of the log.
func (p Point) IsEnd() bool { return p.kind == kindEnd }

// IsTime reports whether p is an instant; TimeMillis returns it.
func (p Point) IsTime() bool { return p.kind == kindTime }

// TimeMillis is the instant of a time point in Unix milliseconds (0 for other points).
func (p Point) TimeMillis() int64 { return p.timeMs }

// Offset returns the single offset of AtOffset and whether p is one.
func (p Point) Offset() (int64, bool) { return p.offset, p.kind == kindOffset }

// Partitions returns the partitions an AtOffsets point names, sorted (nil for other points):
// a caller that has no partition selection of its own reads these.
func (p Point) Partitions() []int32 {
	if p.kind != kindOffsets {
		return nil
	}
	out := make([]int32, 0, len(p.offsets))
	for q := range p.offsets {
		out = append(out, q)
	}
	slices.Sort(out)
	return out
}

// String renders p as a user would type it back: "end", "41", "0:41,3:7" or an RFC 3339 time.
func (p Point) String() string {
	switch p.kind {
	case kindOffset:
		return strconv.FormatInt(p.offset, 10)
	case kindOffsets:
		var parts []string
		for _, q := range p.Partitions() {
			parts = append(parts, fmt.Sprintf("%d:%d", q, p.offsets[q]))
		}
		return strings.Join(parts, ",")
	case kindTime:
		return FormatMillis(p.timeMs)
	}
	return "end"
}

// FormatMillis renders a Kafka millisecond timestamp in UTC with milliseconds, as every
// coordlog output does ("-" for none).
func FormatMillis(ms int64) string {
	if ms < 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// ErrBadPoint is wrapped by every error of ParseOffsets and ParseTime: the value as typed
// cannot name a point (a usage error, whatever the input).
var ErrBadPoint = errors.New("bad point in history")

type badPoint struct{ msg string }

func (e *badPoint) Error() string        { return e.msg }
func (e *badPoint) Is(target error) bool { return target == ErrBadPoint }

func badf(format string, args ...any) error { return &badPoint{fmt.Sprintf(format, args...)} }

// ParseOffsets reads the values of --at-offset: one offset ("41") or partition:offset pairs
// ("0:41", "0:41,3:7", or several values), never both kinds. Offsets are 0 or more: the end of
// the log is the absence of the flag, so "-1" or "-5" is an error rather than a silent "end".
func ParseOffsets(values []string) (Point, error) { return ParseOffsetsAs("--at-offset", values) }

// ParseOffsetsAs is ParseOffsets with errors naming the flag the values came from (diff's
// --from-offset, decode's --to-offset).
func ParseOffsetsAs(flag string, values []string) (Point, error) {
	p, err := parseOffsets(values)
	var bp *badPoint
	if flag != "--at-offset" && errors.As(err, &bp) {
		bp.msg = strings.ReplaceAll(bp.msg, "--at-offset", flag)
		if strings.Contains(bp.msg, "use --at-time") {
			bp.msg = strings.Replace(bp.msg, "use --at-time", "use the time flag:", 1)
		}
	}
	return p, err
}

func parseOffsets(values []string) (Point, error) {
	var items []string
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				items = append(items, s)
			}
		}
	}
	if len(items) == 0 {
		return Point{}, badf("--at-offset is empty: give an offset (41) or partition:offset pairs (0:41,3:7)")
	}
	for _, v := range values {
		if looksLikeTime(v) {
			return Point{}, badf("--at-offset %q is a time, not an offset: use --at-time %s", v, v)
		}
	}
	pairs := map[int32]int64{}
	bare := 0
	var single int64
	for _, s := range items {
		ps, os, isPair := strings.Cut(s, ":")
		if !isPair {
			o, err := parseOffset(s, s)
			if err != nil {
				return Point{}, err
			}
			bare++
			single = o
			continue
		}
		p, err := strconv.ParseInt(strings.TrimSpace(ps), 10, 32)
		if err != nil || p < 0 {
			return Point{}, badf("--at-offset %q: %q is not a __consumer_offsets partition number (partition:offset, e.g. 3:1200)", s, ps)
		}
		o, err := parseOffset(strings.TrimSpace(os), s)
		if err != nil {
			return Point{}, err
		}
		if prev, dup := pairs[int32(p)]; dup {
			return Point{}, badf("--at-offset names partition %d twice (%d and %d)", p, prev, o)
		}
		pairs[int32(p)] = o
	}
	switch {
	case bare > 0 && len(pairs) > 0:
		return Point{}, badf("--at-offset mixes a bare offset with partition:offset pairs: give either one offset (for one partition) or a pair for every partition")
	case bare > 1:
		return Point{}, badf("--at-offset has %d bare offsets: one offset applies to an input of one partition; give partition:offset pairs for several", bare)
	case bare == 1:
		return AtOffset(single), nil
	}
	return Point{kind: kindOffsets, offsets: pairs}, nil
}

// looksLikeTime reports whether an --at-offset value is a time typed into the wrong flag.
func looksLikeTime(s string) bool {
	s = strings.TrimSpace(s)
	if _, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return true
	}
	if _, err := time.Parse("2006-01-02T15:04:05.999999999", s); err == nil {
		return true
	}
	if rest, ok := strings.CutPrefix(s, "-"); ok && !isDigits(rest) {
		if _, err := parseRelative(rest); err == nil {
			return true
		}
	}
	return false
}

func parseOffset(s, whole string) (int64, error) {
	o, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, badf("--at-offset %q: %q is not an offset (a whole number, 0 or more)", whole, s)
	}
	if o < 0 {
		return 0, badf("--at-offset %q: offsets are 0 or more (leave --at-offset out for the end of the log)", whole)
	}
	return o, nil
}

// ParseTime reads a time as --at-time, --since and --until take it: RFC 3339 with a zone
// ("2026-02-20T14:05:00Z", "2026-02-20T15:05:00+01:00", fractional seconds allowed), a time
// relative to now ("-2h", "-90m", "-1h30m", "-3d"; only the past), "now", or Unix milliseconds
// as Kafka stores them ("1771596300000"). A time without a zone is refused: it would mean a
// different instant on every machine.
func ParseTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return time.Time{}, badf("empty time: give RFC 3339 (2026-02-20T14:05:00Z) or a relative time (-2h)")
	case s == "now":
		return now, nil
	case strings.HasPrefix(s, "-"):
		d, err := parseRelative(s[1:])
		if err != nil {
			return time.Time{}, badf("%q is not a relative time: write -2h, -90m, -1h30m or -3d (%v)", s, err)
		}
		return now.Add(-d), nil
	case strings.HasPrefix(s, "+"):
		return time.Time{}, badf("%q is in the future: relative times count back from now (-2h)", s)
	}
	if isDigits(s) {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, badf("%q: Unix milliseconds out of range", s)
		}
		return time.UnixMilli(ms), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if _, err := time.Parse("2006-01-02T15:04:05.999999999", s); err == nil {
		return time.Time{}, badf("%q has no time zone: add Z for UTC or an offset like +01:00", s)
	}
	if _, err := time.Parse("2006-01-02", s); err == nil {
		return time.Time{}, badf("%q is a date without a time: write %sT00:00:00Z (UTC) or with an offset like +01:00", s, s)
	}
	if d, err := parseRelative(s); err == nil && d > 0 {
		return time.Time{}, badf("%q: a relative time counts back from now and starts with '-' (-%s)", s, s)
	}
	return time.Time{}, badf("%q is not a time: give RFC 3339 (2026-02-20T14:05:00Z), a relative time (-2h) or Unix milliseconds", s)
}

// ParseSpan reads a span of time as the command line gives one: time.ParseDuration's units
// plus days ("500ms", "1m", "7d", "1d12h"); negative spans are refused.
func ParseSpan(s string) (time.Duration, error) {
	d, err := parseRelative(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a span of time (500ms, 90s, 1m, 7d): %w", s, err)
	}
	return d, nil
}

// parseRelative is time.ParseDuration plus a day unit ("3d", "1d12h").
func parseRelative(s string) (time.Duration, error) {
	var days int64
	if i := strings.IndexByte(s, 'd'); i > 0 && isDigits(s[:i]) {
		n, err := strconv.ParseInt(s[:i], 10, 32)
		if err != nil {
			return 0, err
		}
		days, s = n, s[i+1:]
	}
	var d time.Duration
	if s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, err
		}
	}
	if d < 0 {
		return 0, errors.New("negative duration")
	}
	if days > math.MaxInt64/int64(24*time.Hour) {
		return 0, errors.New("too far back")
	}
	return time.Duration(days)*24*time.Hour + d, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
