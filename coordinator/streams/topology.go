package streams

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// Kafka's internal topics (Topic.INTERNAL_TOPICS): prohibited in a streams topology.
var kafkaInternalTopics = map[string]bool{"__consumer_offsets": true, "__transaction_state": true, "__share_group_state": true}

// validTopicName is Topic.validate: 1..249 characters of [a-zA-Z0-9._-], not "." or "..".
func validTopicName(n string) bool {
	if n == "" || n == "." || n == ".." || len(n) > 249 {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// requestTopics lists every topic name a request topology uses (sources, repartition sinks,
// repartition sources, changelogs), sorted and unique.
func requestTopics(t *kmsg.StreamsGroupHeartbeatRequestTopology) []string {
	set := map[string]bool{}
	for _, s := range t.Subtopologies {
		for _, n := range s.SourceTopics {
			set[n] = true
		}
		for _, n := range s.RepartitionSinkTopics {
			set[n] = true
		}
		for _, ti := range s.RepartitionSourceTopics {
			set[ti.Topic] = true
		}
		for _, ti := range s.StateChangelogTopics {
			set[ti.Topic] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// checkTopologyNames is KafkaApis' early check of a request topology (before the coordinator).
func checkTopologyNames(t *kmsg.StreamsGroupHeartbeatRequestTopology) *coordinator.Error {
	names := requestTopics(t)
	var internal, invalid []string
	for _, n := range names {
		if kafkaInternalTopics[n] {
			internal = append(internal, n)
		}
		if !validTopicName(n) {
			invalid = append(invalid, n)
		}
	}
	if len(internal) > 0 {
		return coordinator.Errorf(ErrStreamsInvalidTopology, "Use of Kafka internal topics %s in a Kafka Streams topology is prohibited.", strings.Join(internal, ","))
	}
	if len(invalid) > 0 {
		return coordinator.Errorf(ErrStreamsInvalidTopology, "Topic names %s are not valid topic names.", strings.Join(invalid, ","))
	}
	return nil
}

// checkTopologyKIP applies KIP-1071's extra topology invariants that Kafka 4.4 does not
// enforce (Config.StrictTopologyValidation).
func checkTopologyKIP(t *kmsg.StreamsGroupHeartbeatRequestTopology) *coordinator.Error {
	sources, changelogs, sinks := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, s := range t.Subtopologies {
		for _, n := range s.SourceTopics {
			sources[n] = true
		}
		for _, ti := range s.StateChangelogTopics {
			changelogs[ti.Topic] = true
		}
		for _, n := range s.RepartitionSinkTopics {
			sinks[n] = true
		}
	}
	for _, s := range t.Subtopologies {
		for _, ti := range s.RepartitionSourceTopics {
			if sources[ti.Topic] || changelogs[ti.Topic] {
				return coordinator.Errorf(ErrStreamsInvalidTopology, "Repartition source topic %s is also used as a source or changelog topic.", ti.Topic)
			}
			if !sinks[ti.Topic] {
				return coordinator.Errorf(ErrStreamsInvalidTopology, "Repartition source topic %s is not written by any subtopology.", ti.Topic)
			}
		}
		for _, ti := range s.StateChangelogTopics {
			if sources[ti.Topic] || sinks[ti.Topic] {
				return coordinator.Errorf(ErrStreamsInvalidTopology, "Changelog topic %s is also used as a source or sink topic.", ti.Topic)
			}
		}
		if err := checkCopartitionIndexes(s); err != nil {
			return err
		}
	}
	return nil
}

func checkCopartitionIndexes(s kmsg.StreamsGroupHeartbeatRequestTopologySubtopology) *coordinator.Error {
	for _, cg := range s.CopartitionGroups {
		for _, i := range cg.SourceTopics {
			if int(i) < 0 || int(i) >= len(s.SourceTopics) {
				return coordinator.Errorf(ErrStreamsInvalidTopology, "Copartition group of subtopology %s refers to source topic index %d out of range.", s.SubtopologyID, i)
			}
		}
		for _, i := range cg.RepartitionSourceTopics {
			if int(i) < 0 || int(i) >= len(s.RepartitionSourceTopics) {
				return coordinator.Errorf(ErrStreamsInvalidTopology, "Copartition group of subtopology %s refers to repartition source topic index %d out of range.", s.SubtopologyID, i)
			}
		}
	}
	return nil
}

func topicInfoFromRequest(in []kmsg.TopicInfo) []groupstate.StreamsTopicInfo {
	if len(in) == 0 {
		return nil
	}
	out := make([]groupstate.StreamsTopicInfo, len(in))
	for i, t := range in {
		out[i] = groupstate.StreamsTopicInfo{Name: t.Topic, Partitions: t.NumPartitions, ReplicationFactor: t.ReplicationFactor}
		for _, c := range t.Configs {
			out[i].TopicConfigs = append(out[i].TopicConfigs, groupstate.KeyValue{Key: c.Key, Value: c.Value})
		}
	}
	return out
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// topologyFromRequest is StreamsTopology.fromHeartbeatRequest, in groupstate's shape
// (subtopologies sorted by id as in views; the lists keep the request's order).
func topologyFromRequest(t *kmsg.StreamsGroupHeartbeatRequestTopology) *groupstate.StreamsTopology {
	out := &groupstate.StreamsTopology{Epoch: t.Epoch}
	for _, s := range t.Subtopologies {
		st := groupstate.Subtopology{
			SubtopologyID:           s.SubtopologyID,
			SourceTopics:            nilIfEmpty(slices.Clone(s.SourceTopics)),
			SourceTopicRegex:        nilIfEmpty(slices.Clone(s.SourceTopicRegex)),
			StateChangelogTopics:    topicInfoFromRequest(s.StateChangelogTopics),
			RepartitionSinkTopics:   nilIfEmpty(slices.Clone(s.RepartitionSinkTopics)),
			RepartitionSourceTopics: topicInfoFromRequest(s.RepartitionSourceTopics),
		}
		for _, cg := range s.CopartitionGroups {
			st.CopartitionGroups = append(st.CopartitionGroups, groupstate.CopartitionGroup{
				SourceTopics:            nilIfEmpty(slices.Clone(cg.SourceTopics)),
				SourceTopicRegex:        nilIfEmpty(slices.Clone(cg.SourceTopicRegex)),
				RepartitionSourceTopics: nilIfEmpty(slices.Clone(cg.RepartitionSourceTopics)),
			})
		}
		out.Subtopologies = append(out.Subtopologies, st)
	}
	slices.SortStableFunc(out.Subtopologies, func(a, b groupstate.Subtopology) int { return strings.Compare(a.SubtopologyID, b.SubtopologyID) })
	return out
}

// topologyRecordValue is convertToStreamsGroupTopologyRecord: record 23 keeps the request's
// subtopology order.
func topologyRecordValue(t *kmsg.StreamsGroupHeartbeatRequestTopology) *recordcodec.StreamsGroupTopologyValue {
	v := recordcodec.NewStreamsGroupTopologyValue()
	v.Epoch = t.Epoch
	info := func(in []kmsg.TopicInfo) []recordcodec.StreamsTopicInfo {
		out := make([]recordcodec.StreamsTopicInfo, len(in))
		for i, ti := range in {
			out[i] = recordcodec.StreamsTopicInfo{Name: ti.Topic, Partitions: ti.NumPartitions, ReplicationFactor: ti.ReplicationFactor, TopicConfigs: []recordcodec.KeyValue{}}
			for _, c := range ti.Configs {
				out[i].TopicConfigs = append(out[i].TopicConfigs, recordcodec.KeyValue{Key: c.Key, Value: c.Value})
			}
		}
		return out
	}
	v.Subtopologies = []recordcodec.Subtopology{}
	for _, s := range t.Subtopologies {
		st := recordcodec.Subtopology{
			SubtopologyId:           s.SubtopologyID,
			SourceTopics:            orEmpty(s.SourceTopics),
			SourceTopicRegex:        orEmpty(s.SourceTopicRegex),
			StateChangelogTopics:    info(s.StateChangelogTopics),
			RepartitionSinkTopics:   orEmpty(s.RepartitionSinkTopics),
			RepartitionSourceTopics: info(s.RepartitionSourceTopics),
			CopartitionGroups:       []recordcodec.CopartitionGroup{},
		}
		for _, cg := range s.CopartitionGroups {
			st.CopartitionGroups = append(st.CopartitionGroups, recordcodec.CopartitionGroup{
				SourceTopics: orEmpty(cg.SourceTopics), SourceTopicRegex: orEmpty(cg.SourceTopicRegex), RepartitionSourceTopics: orEmpty(cg.RepartitionSourceTopics),
			})
		}
		v.Subtopologies = append(v.Subtopologies, st)
	}
	return v
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return slices.Clone(s)
}

// sameTopology is StreamsTopology.equals: same epoch and, per subtopology id, equal record
// fields with list order significant.
func sameTopology(a, b *groupstate.StreamsTopology) bool {
	if a.Epoch != b.Epoch || len(a.Subtopologies) != len(b.Subtopologies) {
		return false
	}
	for i := range a.Subtopologies { // both sorted by id
		x, y := &a.Subtopologies[i], &b.Subtopologies[i]
		if x.SubtopologyID != y.SubtopologyID || !slices.Equal(x.SourceTopics, y.SourceTopics) ||
			!slices.Equal(x.SourceTopicRegex, y.SourceTopicRegex) || !slices.Equal(x.RepartitionSinkTopics, y.RepartitionSinkTopics) ||
			!sameTopicInfos(x.StateChangelogTopics, y.StateChangelogTopics) || !sameTopicInfos(x.RepartitionSourceTopics, y.RepartitionSourceTopics) ||
			len(x.CopartitionGroups) != len(y.CopartitionGroups) {
			return false
		}
		for j := range x.CopartitionGroups {
			p, q := x.CopartitionGroups[j], y.CopartitionGroups[j]
			if !slices.Equal(p.SourceTopics, q.SourceTopics) || !slices.Equal(p.SourceTopicRegex, q.SourceTopicRegex) || !slices.Equal(p.RepartitionSourceTopics, q.RepartitionSourceTopics) {
				return false
			}
		}
	}
	return true
}

func sameTopicInfos(a, b []groupstate.StreamsTopicInfo) bool {
	return slices.EqualFunc(a, b, func(x, y groupstate.StreamsTopicInfo) bool {
		return x.Name == y.Name && x.Partitions == y.Partitions && x.ReplicationFactor == y.ReplicationFactor && slices.Equal(x.TopicConfigs, y.TopicConfigs)
	})
}

// ---------------------------------------------------------------------------------------
// Configured topology (InternalTopicManager.configureTopics).

// InternalTopic is an internal (repartition or changelog) topic the caller should create.
type InternalTopic struct {
	Name              string
	Partitions        int32
	ReplicationFactor int16 // -1: broker default
	Configs           []groupstate.KeyValue
}

type configuredSubtopology struct {
	id                 string
	numTasks           int32
	sourceTopics       []string
	repartitionSources []string
	stateful           bool
}

// configuredTopology is ConfiguredTopology: ready when status is nil.
type configuredTopology struct {
	epoch         int32
	subtopologies []configuredSubtopology // sorted by id; nil when configuration failed early
	byID          map[string]*configuredSubtopology
	toCreate      []InternalTopic
	status        *Status
	// partitions is the partition count of every topic the endpoint mapping needs: actual
	// when the topic exists, else decided.
	partitions map[string]int32
}

func (c *configuredTopology) ready() bool { return c.status == nil }

// Status codes of the heartbeat response.
const (
	StatusStaleTopology                int8 = 0
	StatusMissingSourceTopics          int8 = 1
	StatusIncorrectlyPartitionedTopics int8 = 2
	StatusMissingInternalTopics        int8 = 3
	StatusShutdownApplication          int8 = 4
	StatusAssignmentDelayed            int8 = 5
	StatusMissingClientTags            int8 = 6
)

// Status is one response status.
type Status struct {
	Code   int8
	Detail string
}

func summarizeTopics(names []string) string {
	if len(names) == 0 {
		return "<none>"
	}
	s := strings.Join(names[:min(3, len(names))], ", ")
	if len(names) > 3 {
		s += fmt.Sprintf(" and %d additional topics", len(names)-3)
	}
	return s
}

// javaMap renders a sorted map as Java's TreeMap.toString does.
func javaMap(m map[string]int32) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%d", k, m[k])
	}
	b.WriteByte('}')
	return b.String()
}

// configure is InternalTopicManager.configureTopics. A STREAMS_INVALID_TOPOLOGY (or an
// internal inconsistency) is returned as an error; topic-configuration problems become the
// status of the configured topology.
func configure(t *groupstate.StreamsTopology, md *coordinator.Metadata) (*configuredTopology, *coordinator.Error) {
	ct := &configuredTopology{epoch: t.Epoch}
	// 1. Missing source topics.
	if missing := missingSourceTopics(t, md); len(missing) > 0 {
		ct.status = &Status{StatusMissingSourceTopics, "Source topics " + summarizeTopics(missing) + " are missing."}
		return ct, nil
	}
	pc := &partitionCounts{md: md, decided: map[string]int32{}}
	// 2. Repartition topic counts (RepartitionTopics.setup).
	if err := pc.setupRepartitionTopics(t); err != nil {
		return nil, err
	}
	// 3. Copartitioning (CopartitionedTopicsEnforcer.enforce per group).
	if status, err := pc.enforceCopartitioning(t); err != nil {
		return nil, err
	} else if status != nil {
		ct.status = status
		return ct, nil
	}
	// 4. Changelog counts (ChangelogTopics.setup) and 5. tasks per subtopology.
	if err := ct.setupSubtopologies(t, pc); err != nil {
		return nil, err
	}
	// 6. Internal topics to create and 7. missing internal topics.
	ct.toCreate, ct.status = internalTopics(t, md, pc.decided)
	return ct, nil
}

// missingSourceTopics lists the source topics absent from the metadata, sorted and unique.
func missingSourceTopics(t *groupstate.StreamsTopology, md *coordinator.Metadata) []string {
	var missing []string
	for _, st := range t.Subtopologies {
		for _, s := range st.SourceTopics {
			if _, ok := md.Topic(s); !ok {
				missing = append(missing, s)
			}
		}
	}
	slices.Sort(missing)
	return slices.Compact(missing)
}

// partitionCounts is what configure knows of partition counts: the actual count of a topic
// that exists, else the count decided so far for an internal topic.
type partitionCounts struct {
	md      *coordinator.Metadata
	decided map[string]int32
}

func (pc *partitionCounts) count(topic string) (int32, bool) {
	if tm, ok := pc.md.Topic(topic); ok {
		return tm.Partitions, true
	}
	n, ok := pc.decided[topic]
	return n, ok
}

// setupRepartitionTopics is RepartitionTopics.setup: a repartition topic without a fixed
// count gets the largest count among the inputs (source and repartition source topics) of
// the subtopology that writes it, repeated until every sink topic has one.
func (pc *partitionCounts) setupRepartitionTopics(t *groupstate.StreamsTopology) *coordinator.Error {
	rep := map[string]int32{}
	for _, st := range t.Subtopologies {
		for _, r := range st.RepartitionSourceTopics {
			if r.Partitions != 0 {
				rep[r.Name] = r.Partitions
			}
		}
	}
	for {
		needed, progress := false, false
		for _, st := range t.Subtopologies {
			for _, sink := range st.RepartitionSinkTopics {
				if _, ok := rep[sink]; ok {
					continue
				}
				if n, found := pc.maxInputCount(st, rep); found {
					rep[sink] = n
					progress = true
				} else {
					needed = true
				}
			}
		}
		if needed && !progress {
			return coordinator.Errorf(ErrStreamsInvalidTopology, "Failed to compute number of partitions for all repartition topics. There may be loops in the topology that cannot be resolved.")
		}
		if !needed {
			break
		}
	}
	for _, st := range t.Subtopologies {
		for _, r := range st.RepartitionSourceTopics {
			if _, ok := rep[r.Name]; !ok {
				return coordinator.Errorf(ErrStreamsInvalidTopology, "Failed to compute number of partitions for all repartition topics, because a repartition source topic is never used as a sink topic.")
			}
		}
	}
	maps.Copy(pc.decided, rep)
	return nil
}

// maxInputCount is the largest known partition count among st's repartition source topics
// (counts in rep) and source topics.
func (pc *partitionCounts) maxInputCount(st groupstate.Subtopology, rep map[string]int32) (int32, bool) {
	var best int32
	found := false
	for _, r := range st.RepartitionSourceTopics {
		if n, ok := rep[r.Name]; ok && (!found || n > best) {
			best, found = n, true
		}
	}
	for _, s := range st.SourceTopics {
		if n, ok := pc.count(s); ok && (!found || n > best) {
			best, found = n, true
		}
	}
	return best, found
}

// enforceCopartitioning is CopartitionedTopicsEnforcer.enforce for every copartition group:
// the topics of a group must share one partition count, which the group's flexible
// repartition topics are then given.
func (pc *partitionCounts) enforceCopartitioning(t *groupstate.StreamsTopology) (*Status, *coordinator.Error) {
	fixed, flexible := map[string]bool{}, map[string]bool{}
	for _, st := range t.Subtopologies {
		for _, r := range st.RepartitionSourceTopics {
			if r.Partitions != 0 {
				fixed[r.Name] = true
			} else {
				flexible[r.Name] = true
			}
		}
	}
	fixedSorted := slices.Sorted(maps.Keys(fixed))
	for _, st := range t.Subtopologies {
		for _, cg := range st.CopartitionGroups {
			topics, err := copartitionTopics(st, cg)
			if err != nil {
				return nil, err
			}
			if len(topics) == 0 {
				continue
			}
			if status, err := pc.enforceCopartitionGroup(topics, fixed, flexible, fixedSorted); status != nil || err != nil {
				return status, err
			}
		}
	}
	return nil, nil
}

// copartitionTopics lists the topics of a copartition group, sorted and unique.
func copartitionTopics(st groupstate.Subtopology, cg groupstate.CopartitionGroup) ([]string, *coordinator.Error) {
	var topics []string
	for _, i := range cg.SourceTopics {
		if int(i) < 0 || int(i) >= len(st.SourceTopics) {
			return nil, coordinator.Errorf(coordinator.ErrUnknownServerError, "")
		}
		topics = append(topics, st.SourceTopics[i])
	}
	for _, i := range cg.RepartitionSourceTopics {
		if int(i) < 0 || int(i) >= len(st.RepartitionSourceTopics) {
			return nil, coordinator.Errorf(coordinator.ErrUnknownServerError, "")
		}
		topics = append(topics, st.RepartitionSourceTopics[i].Name)
	}
	slices.Sort(topics)
	return slices.Compact(topics), nil
}

// enforceCopartitionGroup decides the count of one copartition group: that of its other
// (non-repartition) topics, which must agree; without any, that of the fixed repartition
// topics of the topology (which must agree), else the largest count in the group. Every
// repartition topic of the group then gets it; a fixed one must already have it.
func (pc *partitionCounts) enforceCopartitionGroup(topics []string, fixed, flexible map[string]bool, fixedSorted []string) (*Status, *coordinator.Error) {
	repCounts, other := map[string]int32{}, map[string]int32{}
	for _, tp := range topics {
		n, ok := pc.count(tp)
		if !ok {
			return nil, coordinator.Errorf(coordinator.ErrUnknownServerError, "")
		}
		if fixed[tp] || flexible[tp] {
			repCounts[tp] = n
		} else {
			other[tp] = n
		}
	}
	var use int32
	if len(other) == 0 {
		var status *Status
		var err *coordinator.Error
		if use, status, err = pc.repartitionGroupCount(repCounts, fixedSorted); status != nil || err != nil {
			return status, err
		}
	} else {
		first := int32(-1)
		for _, tp := range slices.Sorted(maps.Keys(other)) {
			if first == -1 {
				first = other[tp]
			} else if other[tp] != first {
				return &Status{StatusIncorrectlyPartitionedTopics, fmt.Sprintf("Following topics do not have the same number of partitions: [%s]", javaMap(other))}, nil
			}
		}
		use = first
	}
	for _, tp := range slices.Sorted(maps.Keys(repCounts)) {
		if fixed[tp] && repCounts[tp] != use {
			return &Status{StatusIncorrectlyPartitionedTopics, fmt.Sprintf("Number of partitions [%d] of repartition topic [%s] doesn't match number of partitions [%d] of the source topic.", repCounts[tp], tp, use)}, nil
		}
		pc.decided[tp] = use
	}
	return nil, nil
}

// repartitionGroupCount is the count of a copartition group made of repartition topics only:
// the count shared by the topology's fixed repartition topics (the first in sorted order;
// Kafka: the first in iteration order), else the largest count in the group.
func (pc *partitionCounts) repartitionGroupCount(repCounts map[string]int32, fixedSorted []string) (int32, *Status, *coordinator.Error) {
	if len(fixedSorted) > 0 {
		first, _ := pc.count(fixedSorted[0])
		for _, f := range fixedSorted {
			if n, _ := pc.count(f); n != first {
				return 0, &Status{StatusIncorrectlyPartitionedTopics, fmt.Sprintf("Following topics do not have the same number of partitions: [%s]", javaMap(repCounts))}, nil
			}
		}
		return first, nil, nil
	}
	var use int32
	for _, n := range repCounts {
		use = max(use, n)
	}
	if use == 0 {
		return 0, nil, coordinator.Errorf(ErrStreamsInvalidTopology, "All topics in the copartition group had undefined partition number: [%s]", strings.Join(slices.Sorted(maps.Keys(repCounts)), ", "))
	}
	return use, nil, nil
}

// setupSubtopologies is ChangelogTopics.setup and the task count of every subtopology (the
// largest count among its source and repartition source topics); a changelog topic gets
// its subtopology's count. It also keeps the partition counts the endpoint mapping needs.
func (ct *configuredTopology) setupSubtopologies(t *groupstate.StreamsTopology, pc *partitionCounts) *coordinator.Error {
	ct.byID = map[string]*configuredSubtopology{}
	ct.partitions = map[string]int32{}
	for _, st := range t.Subtopologies {
		var n int32
		found := false
		cs := configuredSubtopology{id: st.SubtopologyID, sourceTopics: st.SourceTopics, stateful: len(st.StateChangelogTopics) > 0}
		for _, s := range st.SourceTopics {
			c, _ := pc.count(s)
			n, found = max(n, c), true
			ct.partitions[s] = c
		}
		for _, r := range st.RepartitionSourceTopics {
			c, ok := pc.count(r.Name)
			if !ok {
				return coordinator.Errorf(coordinator.ErrUnknownServerError, "")
			}
			n, found = max(n, c), true
			cs.repartitionSources = append(cs.repartitionSources, r.Name)
			ct.partitions[r.Name] = c
		}
		if !found {
			return coordinator.Errorf(ErrStreamsInvalidTopology, "No source topics found for subtopology %s", st.SubtopologyID)
		}
		for _, c := range st.StateChangelogTopics {
			pc.decided[c.Name] = n
		}
		cs.numTasks = n
		ct.subtopologies = append(ct.subtopologies, cs)
	}
	for i := range ct.subtopologies {
		ct.byID[ct.subtopologies[i].id] = &ct.subtopologies[i]
	}
	return nil
}

// internalTopics is steps 6 and 7: every repartition and changelog topic with its count (its
// own, else the decided one); an existing one must have that count, and the missing ones
// are returned to create (sorted by name: Kafka lists them in hash order) with the
// MISSING_INTERNAL_TOPICS status.
func internalTopics(t *groupstate.StreamsTopology, md *coordinator.Metadata, decided map[string]int32) ([]InternalTopic, *Status) {
	want := map[string]InternalTopic{}
	add := func(ti groupstate.StreamsTopicInfo) {
		n := ti.Partitions
		if n == 0 {
			n = decided[ti.Name]
		}
		rf := ti.ReplicationFactor
		if rf == 0 {
			rf = -1
		}
		want[ti.Name] = InternalTopic{Name: ti.Name, Partitions: n, ReplicationFactor: rf, Configs: ti.TopicConfigs}
	}
	for _, st := range t.Subtopologies {
		for _, r := range st.RepartitionSourceTopics {
			add(r)
		}
		for _, c := range st.StateChangelogTopics {
			add(c)
		}
	}
	for _, name := range t.RequiredTopics() {
		tm, ok := md.Topic(name)
		if !ok {
			continue
		}
		if exp, ok := want[name]; ok {
			delete(want, name)
			if tm.Partitions != exp.Partitions {
				return nil, &Status{StatusIncorrectlyPartitionedTopics, fmt.Sprintf("Existing topic %s has different number of partitions: expected %d, found %d", name, exp.Partitions, tm.Partitions)}
			}
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	names := slices.Sorted(maps.Keys(want))
	var toCreate []InternalTopic
	for _, n := range names {
		toCreate = append(toCreate, want[n])
	}
	return toCreate, &Status{StatusMissingInternalTopics, "Internal topics are missing: " + summarizeTopics(names)}
}
