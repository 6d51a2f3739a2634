package consumer

import (
	"errors"
	"maps"
	"regexp"
	"regexp/syntax"
	"slices"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// Regular-expression subscriptions (ConsumerGroupHeartbeat v1, SubscribedTopicRegex).
//
// Kafka compiles them with RE2/J, a Java port of Go's regexp package: the same syntax (Perl
// flags, \Q..\E, named groups in both (?P<n>) and (?<n>) forms, no look-around or
// backreferences) and the same error descriptions ("missing closing )"), except an unmatched
// ")", which RE2/J reports as its internal error. A topic matches when the whole name matches
// (Matcher.matches), so coordlog anchors the expression. TestRegexesEqualRE2J checks 59
// expressions against RE2/J 1.8 (validity, description, matches on 20 names).

// regexStatus is UpdateRegularExpressionStatus.
type regexStatus int8

const (
	regexNoChange regexStatus = iota
	regexUpdated
	regexUpdatedAndResolved
)

// regexRefreshMinIntervalMs is REGEX_BATCH_REFRESH_MIN_INTERVAL_MS: resolutions are at least
// 10 s apart.
const regexRefreshMinIntervalMs = 10_000

// compileRegex compiles a subscription regex as RE2/J does, anchored for a whole-name match;
// a syntax error is INVALID_REGULAR_EXPRESSION with RE2/J's description.
func compileRegex(re string) (*regexp.Regexp, *coordinator.Error) {
	if _, err := syntax.Parse(re, syntax.Perl); err != nil {
		desc := err.Error()
		var se *syntax.Error
		if errors.As(err, &se) {
			desc = se.Code.String()
			if se.Code == syntax.ErrUnexpectedParen {
				// Go names an unmatched ")" since 1.7; RE2/J, ported before, reports its
				// internal error (TestRegexesEqualRE2J).
				desc = syntax.ErrInternalError.String()
			}
		}
		return nil, coordinator.Errorf(coordinator.ErrInvalidRegularExpr, "SubscribedTopicRegex `%s` is not a valid regular expression: %s.", re, desc)
	}
	x, err := regexp.Compile(`^(?:` + re + `)$`)
	if err != nil {
		return nil, coordinator.Errorf(coordinator.ErrInvalidRegularExpr, "SubscribedTopicRegex `%s` is not a valid regular expression: %s.", re, err.Error())
	}
	return x, nil
}

// updateRegex is maybeUpdateRegularExpressions: a member changing its regex tombstones the
// old one if it was its last user (record 16); a regex nobody used yet must compile and be
// resolved (UPDATED, no bump yet); one already resolved for the group bumps at once
// (UPDATED_AND_RESOLVED), as does clearing a regex. Then a resolution is scheduled when the
// group has regexes, none is in flight, the last one is more than 10 s old, and some regex is
// unresolved, topics were created since, or the refresh interval passed.
func (h *heartbeat) updateRegex() *coordinator.Error {
	g, m, u := h.g, h.m, h.u
	requireRefresh := false
	if m.regex != u.regex {
		h.regexStatus = regexUpdated
		if m.regex != "" && g.numRegexSubscribers(m.regex) == 1 {
			h.records = append(h.records, regexTombstone(g.id, m.regex))
		}
		switch {
		case u.regex != "":
			if g.numRegexSubscribers(u.regex) == 0 {
				if _, err := compileRegex(u.regex); err != nil {
					return err
				}
				requireRefresh = true
			} else if _, ok := g.regexes[u.regex]; ok {
				h.regexStatus = regexUpdatedAndResolved
			}
		case m.regex != "":
			h.regexStatus = regexUpdatedAndResolved
		}
	}
	current := g.subscribedRegexes(nil, nil)
	if !requireRefresh && len(current) == 0 {
		return nil
	}
	gs := h.soft.group(g.id)
	if gs.RegexResolution != nil {
		return nil
	}
	last, lastVersion := lastRegexRefresh(g)
	if h.now <= last+regexRefreshMinIntervalMs {
		return nil
	}
	next := g.subscribedRegexes(m, u)
	requireRefresh = requireRefresh || len(next) != len(g.regexes) || lastVersion < h.soft.NewTopicsVersion ||
		h.now > last+h.cfg.RegexRefreshIntervalMs
	if requireRefresh && len(next) > 0 {
		gs.RegexResolution = &RegexResolution{Group: g.id, Member: u.id, Regexes: slices.Sorted(maps.Keys(next))}
		h.regexResolution = gs.RegexResolution
	}
	return nil
}

// lastRegexRefresh is lastResolvedRegularExpressionRefreshTimeMs and ...Version: the
// timestamp and metadata version of the group's first resolved regex (a resolution writes
// them all at once), or (MinInt64, 0) without any.
func lastRegexRefresh(g *group) (int64, int64) {
	if len(g.regexes) == 0 {
		return -1 << 63, 0
	}
	first := g.regexes[slices.Sorted(maps.Keys(g.regexes))[0]]
	return first.Timestamp, first.Version
}

// ResolveRegexes runs the resolution a heartbeat scheduled for groupID (Result.
// RegexResolution; Kafka: TopicRegexResolver on the executor, then
// handleRegularExpressionsResult) against the metadata now and returns its records, one
// batch: record 16 for each regex still in use, and record 3 with the next epoch when a
// regex's topics changed or the metadata hash moved. Every topic of md whose whole name
// matches counts (coordlog has no authorizer, so no topic is filtered out). ok is false when
// nothing was scheduled.
func (c *Coordinator) ResolveRegexes(st groupstate.View, soft *Soft, md *coordinator.Metadata, groupID string, now int64) (records []recordcodec.Record, ok bool) {
	gs := soft.Groups[groupID]
	if gs == nil || gs.RegexResolution == nil {
		return nil, false
	}
	job := gs.RegexResolution
	gs.RegexResolution = nil
	soft.observeMetadata(md)
	g, exists := consumerGroupOf(st, groupID)
	if !exists {
		return nil, true
	}
	var version int64
	if md != nil {
		version = md.Version
	}
	topicNames := []string{}
	if md != nil {
		topicNames = slices.Sorted(maps.Keys(md.Topics))
	}
	bump := false
	resolved := maps.Clone(g.regexes)
	for _, re := range job.Regexes {
		if g.numRegexSubscribers(re) == 0 {
			continue
		}
		x, err := compileRegex(re)
		var topics []string
		if err == nil {
			for _, n := range topicNames {
				if x.MatchString(n) {
					topics = append(topics, n)
				}
			}
		}
		if !slices.Equal(g.regexes[re].Topics, topics) {
			bump = true
		}
		records = append(records, regexRecord(g.id, re, topics, version, now))
		resolved[re] = groupstate.ResolvedRegularExpression{Regex: re, Topics: topics, Version: version, Timestamp: now}
	}
	g.regexes = resolved
	hash := groupHash(g.subscribedTopicNames(nil, nil, nil), md)
	if hash != g.metadataHash {
		bump = true
	}
	if bump {
		records = append(records, groupMetadataRecord(g.id, g.epoch+1, hash))
		var mdVersion int64
		if md != nil {
			mdVersion = md.Version
		}
		gs.setRefreshDeadline(now, g.epoch+1, mdVersion)
	}
	return records, true
}
