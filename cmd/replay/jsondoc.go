package main

import (
	"github.com/coordlog/coordlog/cluster"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay/explain"
)

// The JSON documents' parts that differ from the model's own JSON (groupstate's struct tags,
// which serve its canonical dump): coordlog's interface, described by docs/json/*.schema.json.
// Against the model they say each thing once (a group's id and state at the top only, a
// member's state as a name), give null for an id the log does not carry (offset commits before
// Kafka 4.1 hold an all-zero topic id), and name each topic beside its id where the log names
// it.

// schemaVersion is the version of every JSON document the commands write (the
// "schemaVersion" field): it changes when a field changes meaning or goes away, not when one is
// added.
const schemaVersion = 1

// topicIDDoc is a topic id for a document: nil for the all-zero id (none).
func topicIDDoc(id groupstate.Uuid) *string {
	if id.IsZero() {
		return nil
	}
	s := id.String()
	return &s
}

// topicNames resolves topic ids to names, as far as the log names them.
type topicNames map[string]string

// name returns the topic's name, nil when the log does not name it.
func (n topicNames) name(id groupstate.Uuid) *string {
	if s, ok := n[id.String()]; ok && !id.IsZero() {
		return &s
	}
	return nil
}

// offsetDoc is a committed or pending offset.
type offsetDoc struct {
	GroupID         string  `json:"groupId"`
	Topic           string  `json:"topic"`
	Partition       int32   `json:"partition"`
	CommittedOffset int64   `json:"committedOffset"`
	LeaderEpoch     int32   `json:"leaderEpoch"` // -1: none
	Metadata        string  `json:"metadata"`
	CommitTimestamp int64   `json:"commitTimestamp"`
	ExpireTimestamp int64   `json:"expireTimestamp"` // -1: none
	TopicID         *string `json:"topicId"`
	RecordOffset    int64   `json:"recordOffset"`
	// Mark is what the commit that wrote it is marked with (offsets only; absent: nothing).
	Mark *offsetMarkDoc `json:"mark,omitempty"`
}

// offsetMarkDoc is explain.OffsetMark in offsets' JSON.
type offsetMarkDoc struct {
	Marks    []string `json:"marks"`
	Previous *int64   `json:"previous"`
	Delta    *int64   `json:"delta"`
}

func markJSON(m *explain.OffsetMark) *offsetMarkDoc {
	if m == nil {
		return nil
	}
	d := &offsetMarkDoc{Previous: m.Previous, Delta: m.Delta}
	for _, k := range m.Marks {
		d.Marks = append(d.Marks, string(k))
	}
	return d
}

func offsetJSON(o groupstate.CommittedOffset) offsetDoc {
	return offsetDoc{GroupID: o.GroupID, Topic: o.Topic, Partition: o.Partition, CommittedOffset: o.CommittedOffset,
		LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata, CommitTimestamp: o.CommitTimestamp, ExpireTimestamp: o.ExpireTimestamp,
		TopicID: topicIDDoc(o.TopicID), RecordOffset: o.RecordOffset}
}

func offsetsJSON(offs []groupstate.CommittedOffset) []offsetDoc {
	out := make([]offsetDoc, len(offs))
	for i, o := range offs {
		out[i] = offsetJSON(o)
	}
	return out
}

// lagDoc is an offset read live, with its partition's log end offset and the lag.
type lagDoc struct {
	offsetDoc
	LogEnd  *int64 `json:"logEndOffset"`
	Lag     *int64 `json:"lag"`
	Missing string `json:"missing,omitempty"`
}

func lagJSON(r cluster.LagRow) lagDoc {
	return lagDoc{offsetDoc: offsetJSON(r.CommittedOffset), LogEnd: r.LogEnd, Lag: r.Lag, Missing: r.Missing}
}

type pendingTxnDoc struct {
	ProducerID int64       `json:"producerId"`
	Offsets    []offsetDoc `json:"offsets"`
}

func pendingJSON(pts []groupstate.PendingTransaction) []pendingTxnDoc {
	out := make([]pendingTxnDoc, len(pts))
	for i, pt := range pts {
		out[i] = pendingTxnDoc{ProducerID: pt.ProducerID, Offsets: offsetsJSON(pt.Offsets)}
	}
	return out
}

// topicPartitionsDoc is partitions of one topic, by id and name.
type topicPartitionsDoc struct {
	TopicID          *string `json:"topicId"`
	Topic            *string `json:"topic"`
	Partitions       []int32 `json:"partitions"`
	AssignmentEpochs []int32 `json:"assignmentEpochs,omitempty"`
}

func partitionsJSON[T any](tps []T, get func(T) (groupstate.Uuid, []int32, []int32), names topicNames) []topicPartitionsDoc {
	out := make([]topicPartitionsDoc, len(tps))
	for i, tp := range tps {
		id, ps, epochs := get(tp)
		out[i] = topicPartitionsDoc{TopicID: topicIDDoc(id), Topic: names.name(id), Partitions: nonNil(ps), AssignmentEpochs: epochs}
	}
	return out
}

func plainTP(t groupstate.TopicPartitions) (groupstate.Uuid, []int32, []int32) {
	return t.TopicID, t.Partitions, nil
}

func epochTP(t groupstate.TopicPartitionsWithEpochs) (groupstate.Uuid, []int32, []int32) {
	return t.TopicID, t.Partitions, t.AssignmentEpochs
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

type memberTargetDoc struct {
	MemberID   string               `json:"memberId"`
	Partitions []topicPartitionsDoc `json:"partitions"`
}

func targetsJSON(ts []groupstate.MemberTargetAssignment, names topicNames) []memberTargetDoc {
	out := make([]memberTargetDoc, len(ts))
	for i, t := range ts {
		out[i] = memberTargetDoc{MemberID: t.MemberID, Partitions: partitionsJSON(t.Partitions, plainTP, names)}
	}
	return out
}

type topicMetadataDoc struct {
	TopicID       *string `json:"topicId"`
	Topic         string  `json:"topic"`
	NumPartitions int32   `json:"numPartitions"`
}

func topicMetadataJSON(ts []groupstate.TopicMetadata) []topicMetadataDoc {
	out := make([]topicMetadataDoc, len(ts))
	for i, t := range ts {
		out[i] = topicMetadataDoc{TopicID: topicIDDoc(t.TopicID), Topic: t.TopicName, NumPartitions: t.NumPartitions}
	}
	return out
}

// groupDoc is one group of a describe document: its id, type and state, the fields of its
// type under the type's name, and its committed offsets.
type groupDoc struct {
	GroupID  string            `json:"groupId"`
	Type     string            `json:"type"`
	State    string            `json:"state"`
	Classic  *classicGroupDoc  `json:"classic,omitempty"`
	Consumer *consumerGroupDoc `json:"consumer,omitempty"`
	Share    *shareGroupDoc    `json:"share,omitempty"`
	Streams  *streamsGroupDoc  `json:"streams,omitempty"`
	Offsets  []offsetDoc       `json:"offsets"`
}

type classicGroupDoc struct {
	ProtocolType          string                     `json:"protocolType"`
	Generation            int32                      `json:"generation"`
	Protocol              *string                    `json:"protocol"`
	Leader                *string                    `json:"leader"`
	CurrentStateTimestamp int64                      `json:"currentStateTimestamp"` // -1: none
	Simple                bool                       `json:"simple"`
	SubscribedTopicsKnown bool                       `json:"subscribedTopicsKnown"`
	SubscribedTopics      []string                   `json:"subscribedTopics"`
	Members               []groupstate.ClassicMember `json:"members"`
}

type consumerGroupDoc struct {
	GroupEpoch                    int32                                  `json:"groupEpoch"`
	MetadataHash                  int64                                  `json:"metadataHash"`
	HasSubscriptionMetadataRecord bool                                   `json:"hasSubscriptionMetadataRecord"`
	SubscriptionMetadata          []topicMetadataDoc                     `json:"subscriptionMetadata"`
	AssignmentEpoch               int32                                  `json:"assignmentEpoch"`
	AssignmentTimestamp           int64                                  `json:"assignmentTimestamp"`
	Members                       []consumerMemberDoc                    `json:"members"`
	TargetAssignment              []memberTargetDoc                      `json:"targetAssignment"`
	ResolvedRegularExpressions    []groupstate.ResolvedRegularExpression `json:"resolvedRegularExpressions"`
}

type consumerMemberDoc struct {
	MemberID                    string                            `json:"memberId"`
	MemberEpoch                 int32                             `json:"memberEpoch"`
	PreviousMemberEpoch         int32                             `json:"previousMemberEpoch"`
	State                       string                            `json:"state"`
	InstanceID                  *string                           `json:"instanceId"`
	RackID                      *string                           `json:"rackId"`
	RebalanceTimeoutMs          int32                             `json:"rebalanceTimeoutMs"`
	ClientID                    string                            `json:"clientId"`
	ClientHost                  string                            `json:"clientHost"`
	SubscribedTopicNames        []string                          `json:"subscribedTopicNames"`
	SubscribedTopicRegex        *string                           `json:"subscribedTopicRegex"`
	ServerAssignor              *string                           `json:"serverAssignor"`
	ClassicMemberMetadata       *groupstate.ClassicMemberMetadata `json:"classicMemberMetadata"`
	AssignedPartitions          []topicPartitionsDoc              `json:"assignedPartitions"`
	PartitionsPendingRevocation []topicPartitionsDoc              `json:"partitionsPendingRevocation"`
}

type shareGroupDoc struct {
	GroupEpoch           int32              `json:"groupEpoch"`
	MetadataHash         int64              `json:"metadataHash"`
	SubscriptionMetadata []topicMetadataDoc `json:"subscriptionMetadata"`
	AssignmentEpoch      int32              `json:"assignmentEpoch"`
	AssignmentTimestamp  int64              `json:"assignmentTimestamp"`
	Members              []shareMemberDoc   `json:"members"`
	TargetAssignment     []memberTargetDoc  `json:"targetAssignment"`
}

type shareMemberDoc struct {
	MemberID             string               `json:"memberId"`
	MemberEpoch          int32                `json:"memberEpoch"`
	PreviousMemberEpoch  int32                `json:"previousMemberEpoch"`
	State                string               `json:"state"`
	RackID               *string              `json:"rackId"`
	ClientID             string               `json:"clientId"`
	ClientHost           string               `json:"clientHost"`
	SubscribedTopicNames []string             `json:"subscribedTopicNames"`
	AssignedPartitions   []topicPartitionsDoc `json:"assignedPartitions"`
}

type streamsGroupDoc struct {
	GroupEpoch                     int32                            `json:"groupEpoch"`
	MetadataHash                   int64                            `json:"metadataHash"`
	ValidatedTopologyEpoch         int32                            `json:"validatedTopologyEpoch"`
	StoredDescriptionTopologyEpoch int32                            `json:"storedDescriptionTopologyEpoch"`
	FailedDescriptionTopologyEpoch int32                            `json:"failedDescriptionTopologyEpoch"`
	LastAssignmentConfigs          []groupstate.KeyValue            `json:"lastAssignmentConfigs"`
	AssignmentEpoch                int32                            `json:"assignmentEpoch"`
	AssignmentTimestamp            int64                            `json:"assignmentTimestamp"`
	Topology                       *groupstate.StreamsTopology      `json:"topology"`
	Members                        []streamsMemberDoc               `json:"members"`
	TargetAssignment               []groupstate.StreamsMemberTarget `json:"targetAssignment"`
}

// streamsMemberDoc is a streams member: metadata, epochs, state and tasks are each null until
// the log has the record that sets them.
type streamsMemberDoc struct {
	MemberID               string                            `json:"memberId"`
	MemberEpoch            *int32                            `json:"memberEpoch"`
	PreviousMemberEpoch    *int32                            `json:"previousMemberEpoch"`
	State                  *string                           `json:"state"`
	Metadata               *groupstate.StreamsMemberMetadata `json:"metadata"`
	AssignedTasks          *groupstate.StreamsTasks          `json:"assignedTasks"`
	TasksPendingRevocation *groupstate.StreamsTasks          `json:"tasksPendingRevocation"`
}

// groupJSON converts a group of the model, with its offsets, for a describe document.
func groupJSON(g groupstate.Group, offs []groupstate.CommittedOffset, names topicNames) groupDoc {
	d := groupDoc{GroupID: g.GroupID, Type: string(g.Type), State: g.State, Offsets: offsetsJSON(offs)}
	switch {
	case g.Classic != nil:
		c := g.Classic
		d.Classic = &classicGroupDoc{ProtocolType: c.ProtocolType, Generation: c.Generation, Protocol: c.Protocol, Leader: c.Leader,
			CurrentStateTimestamp: c.CurrentStateTimestamp, Simple: c.Simple, SubscribedTopicsKnown: c.SubscribedTopicsKnown,
			SubscribedTopics: nonNil(c.SubscribedTopics), Members: nonNil(c.Members)}
	case g.Consumer != nil:
		c := g.Consumer
		cd := &consumerGroupDoc{GroupEpoch: c.GroupEpoch, MetadataHash: c.MetadataHash, HasSubscriptionMetadataRecord: c.HasSubscriptionMetadataRecord,
			SubscriptionMetadata: topicMetadataJSON(c.SubscriptionMetadata), AssignmentEpoch: c.AssignmentEpoch, AssignmentTimestamp: c.AssignmentTimestamp,
			Members: make([]consumerMemberDoc, len(c.Members)), TargetAssignment: targetsJSON(c.TargetAssignment, names),
			ResolvedRegularExpressions: nonNil(c.ResolvedRegularExpressions)}
		for i, m := range c.Members {
			cd.Members[i] = consumerMemberDoc{MemberID: m.MemberID, MemberEpoch: m.MemberEpoch, PreviousMemberEpoch: m.PreviousMemberEpoch,
				State: m.StateName, InstanceID: m.InstanceID, RackID: m.RackID, RebalanceTimeoutMs: m.RebalanceTimeoutMs, ClientID: m.ClientID,
				ClientHost: m.ClientHost, SubscribedTopicNames: nonNil(m.SubscribedTopicNames), SubscribedTopicRegex: m.SubscribedTopicRegex,
				ServerAssignor: m.ServerAssignor, ClassicMemberMetadata: m.ClassicMemberMetadata,
				AssignedPartitions:          partitionsJSON(m.AssignedPartitions, epochTP, names),
				PartitionsPendingRevocation: partitionsJSON(m.PartitionsPendingRevocation, epochTP, names)}
		}
		d.Consumer = cd
	case g.Share != nil:
		s := g.Share
		sd := &shareGroupDoc{GroupEpoch: s.GroupEpoch, MetadataHash: s.MetadataHash, SubscriptionMetadata: topicMetadataJSON(s.SubscriptionMetadata),
			AssignmentEpoch: s.AssignmentEpoch, AssignmentTimestamp: s.AssignmentTimestamp, Members: make([]shareMemberDoc, len(s.Members)),
			TargetAssignment: targetsJSON(s.TargetAssignment, names)}
		for i, m := range s.Members {
			sd.Members[i] = shareMemberDoc{MemberID: m.MemberID, MemberEpoch: m.MemberEpoch, PreviousMemberEpoch: m.PreviousMemberEpoch,
				State: m.StateName, RackID: m.RackID, ClientID: m.ClientID, ClientHost: m.ClientHost,
				SubscribedTopicNames: nonNil(m.SubscribedTopicNames), AssignedPartitions: partitionsJSON(m.AssignedPartitions, plainTP, names)}
		}
		d.Share = sd
	case g.Streams != nil:
		s := g.Streams
		sd := &streamsGroupDoc{GroupEpoch: s.GroupEpoch, MetadataHash: s.MetadataHash, ValidatedTopologyEpoch: s.ValidatedTopologyEpoch,
			StoredDescriptionTopologyEpoch: s.StoredDescriptionTopologyEpoch, FailedDescriptionTopologyEpoch: s.FailedDescriptionTopologyEpoch,
			LastAssignmentConfigs: nonNil(s.LastAssignmentConfigs), AssignmentEpoch: s.AssignmentEpoch, AssignmentTimestamp: s.AssignmentTimestamp,
			Topology: s.Topology, Members: make([]streamsMemberDoc, len(s.Members)), TargetAssignment: nonNil(s.TargetAssignment)}
		for i, m := range s.Members {
			md := streamsMemberDoc{MemberID: m.MemberID, MemberEpoch: m.MemberEpoch, PreviousMemberEpoch: m.PreviousMemberEpoch,
				Metadata: m.Metadata, AssignedTasks: m.AssignedTasks, TasksPendingRevocation: m.TasksPendingRevocation}
			if m.State != nil {
				md.State = &m.StateName
			}
			sd.Members[i] = md
		}
		d.Streams = sd
	}
	return d
}
