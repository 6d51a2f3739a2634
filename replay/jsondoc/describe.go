package jsondoc

import (
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/session"
)

// Describe is replay describe's document (docs/json/describe.schema.json): every partition's
// groups with their committed offsets. Its groups are streamed (Seq): each is converted, with
// its offsets read from the state, only when it is written.
type Describe struct {
	SchemaVersion int    `json:"schemaVersion"`
	KafkaVersion  string `json:"kafkaVersion"`
	AtOffset      *int64 `json:"atOffset"` // null: the end of the log, a time, or P:OFFSET pairs
	// AtTime is the time asked for, as resolved (each partition's position says where it fell).
	AtTime     *string             `json:"atTime,omitempty"`
	Partitions []DescribePartition `json:"partitions"`
	Violations []Violation         `json:"violations,omitempty"`
}

// DescribePartition is one partition of a Describe.
type DescribePartition struct {
	Partition  int32 `json:"partition"`
	NextOffset int64 `json:"nextOffset"`
	// Position is where the point fell in this partition (absent at the end).
	Position *query.Position `json:"position,omitempty"`
	// Records is how many records the replay read: all, or those after Snapshot.
	Records  int64     `json:"recordsReplayed"`
	Snapshot *Snapshot `json:"snapshot,omitempty"` // the snapshot the state was restored from
	// TopicNames are the names this partition's records give topic ids.
	TopicNames []query.TopicName `json:"topicNames,omitempty"`
	Groups     Seq[Group]        `json:"groups"`
	// OrphanOffsets are committed offsets whose group no longer exists.
	OrphanOffsets       []Offset             `json:"orphanOffsets,omitempty"`
	PendingTransactions []PendingTransaction `json:"pendingTransactions,omitempty"`
}

// Snapshot is the snapshot a partition's state was restored from.
type Snapshot struct {
	Name       string `json:"name"`
	NextOffset int64  `json:"nextOffset"` // where the replay of the log started
}

// NewDescribe is the document of r described by d (query.Describe of r's views).
func NewDescribe(r *session.Replayed, d query.Description) *Describe {
	doc := &Describe{SchemaVersion: SchemaVersion, KafkaVersion: r.Options.Version.String(), Partitions: []DescribePartition{}}
	doc.AtOffset, doc.AtTime = Point(r.At)
	names := TopicNames(d.Names)
	for i, p := range r.Partitions {
		pd := &d.Partitions[i]
		dp := DescribePartition{Partition: p.Engine.Partition(), NextOffset: p.Engine.NextOffset(), Records: p.RecordsReplayed(),
			TopicNames: pd.TopicNames, OrphanOffsets: OffsetsOf(pd.OrphanOffsets), PendingTransactions: PendingOf(pd.PendingTransactions)}
		if p.Position != nil && !p.Position.AtEnd() {
			dp.Position = p.Position
		}
		if s := p.Snapshot(); s != nil {
			dp.Snapshot = &Snapshot{Name: s.Snapshot, NextOffset: s.NextOffset}
		}
		dp.Groups = func(yield func(Group) bool) {
			for g := range pd.Groups() {
				if !yield(GroupOf(g, pd.View.Offsets(g.GroupID), names)) {
					return
				}
			}
		}
		doc.Partitions = append(doc.Partitions, dp)
		doc.Violations = append(doc.Violations, Violations(p.Engine)...)
	}
	return doc
}

// TopicPartitions is partitions of one topic, by id and name.
type TopicPartitions struct {
	TopicID          *string `json:"topicId"`
	Topic            *string `json:"topic"`
	Partitions       []int32 `json:"partitions"`
	AssignmentEpochs []int32 `json:"assignmentEpochs,omitempty"`
}

func partitionsOf[T any](tps []T, get func(T) (groupstate.Uuid, []int32, []int32), names TopicNames) []TopicPartitions {
	out := make([]TopicPartitions, len(tps))
	for i, tp := range tps {
		id, ps, epochs := get(tp)
		out[i] = TopicPartitions{TopicID: topicID(id), Topic: names.name(id), Partitions: nonNil(ps), AssignmentEpochs: epochs}
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

// MemberTarget is a member's target assignment.
type MemberTarget struct {
	MemberID   string            `json:"memberId"`
	Partitions []TopicPartitions `json:"partitions"`
}

func targetsOf(ts []groupstate.MemberTargetAssignment, names TopicNames) []MemberTarget {
	out := make([]MemberTarget, len(ts))
	for i, t := range ts {
		out[i] = MemberTarget{MemberID: t.MemberID, Partitions: partitionsOf(t.Partitions, plainTP, names)}
	}
	return out
}

// TopicMetadata is a topic as a group's subscription metadata holds it.
type TopicMetadata struct {
	TopicID       *string `json:"topicId"`
	Topic         string  `json:"topic"`
	NumPartitions int32   `json:"numPartitions"`
}

func topicMetadataOf(ts []groupstate.TopicMetadata) []TopicMetadata {
	out := make([]TopicMetadata, len(ts))
	for i, t := range ts {
		out[i] = TopicMetadata{TopicID: topicID(t.TopicID), Topic: t.TopicName, NumPartitions: t.NumPartitions}
	}
	return out
}

// Group is one group of a describe document: its id, type and state, the fields of its
// type under the type's name, and its committed offsets.
type Group struct {
	GroupID  string         `json:"groupId"`
	Type     string         `json:"type"`
	State    string         `json:"state"`
	Classic  *ClassicGroup  `json:"classic,omitempty"`
	Consumer *ConsumerGroup `json:"consumer,omitempty"`
	Share    *ShareGroup    `json:"share,omitempty"`
	Streams  *StreamsGroup  `json:"streams,omitempty"`
	Offsets  []Offset       `json:"offsets"`
}

// ClassicGroup is a classic group's own fields.
type ClassicGroup struct {
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

// ConsumerGroup is a consumer (KIP-848) group's own fields.
type ConsumerGroup struct {
	GroupEpoch                    int32                                  `json:"groupEpoch"`
	MetadataHash                  int64                                  `json:"metadataHash"`
	HasSubscriptionMetadataRecord bool                                   `json:"hasSubscriptionMetadataRecord"`
	SubscriptionMetadata          []TopicMetadata                        `json:"subscriptionMetadata"`
	AssignmentEpoch               int32                                  `json:"assignmentEpoch"`
	AssignmentTimestamp           int64                                  `json:"assignmentTimestamp"`
	Members                       []ConsumerMember                       `json:"members"`
	TargetAssignment              []MemberTarget                         `json:"targetAssignment"`
	ResolvedRegularExpressions    []groupstate.ResolvedRegularExpression `json:"resolvedRegularExpressions"`
}

// ConsumerMember is a consumer group's member.
type ConsumerMember struct {
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
	AssignedPartitions          []TopicPartitions                 `json:"assignedPartitions"`
	PartitionsPendingRevocation []TopicPartitions                 `json:"partitionsPendingRevocation"`
}

// ShareGroup is a share (KIP-932) group's own fields.
type ShareGroup struct {
	GroupEpoch           int32           `json:"groupEpoch"`
	MetadataHash         int64           `json:"metadataHash"`
	SubscriptionMetadata []TopicMetadata `json:"subscriptionMetadata"`
	AssignmentEpoch      int32           `json:"assignmentEpoch"`
	AssignmentTimestamp  int64           `json:"assignmentTimestamp"`
	Members              []ShareMember   `json:"members"`
	TargetAssignment     []MemberTarget  `json:"targetAssignment"`
}

// ShareMember is a share group's member.
type ShareMember struct {
	MemberID             string            `json:"memberId"`
	MemberEpoch          int32             `json:"memberEpoch"`
	PreviousMemberEpoch  int32             `json:"previousMemberEpoch"`
	State                string            `json:"state"`
	RackID               *string           `json:"rackId"`
	ClientID             string            `json:"clientId"`
	ClientHost           string            `json:"clientHost"`
	SubscribedTopicNames []string          `json:"subscribedTopicNames"`
	AssignedPartitions   []TopicPartitions `json:"assignedPartitions"`
}

// StreamsGroup is a streams (KIP-1071) group's own fields.
type StreamsGroup struct {
	GroupEpoch                     int32                            `json:"groupEpoch"`
	MetadataHash                   int64                            `json:"metadataHash"`
	ValidatedTopologyEpoch         int32                            `json:"validatedTopologyEpoch"`
	StoredDescriptionTopologyEpoch int32                            `json:"storedDescriptionTopologyEpoch"`
	FailedDescriptionTopologyEpoch int32                            `json:"failedDescriptionTopologyEpoch"`
	LastAssignmentConfigs          []groupstate.KeyValue            `json:"lastAssignmentConfigs"`
	AssignmentEpoch                int32                            `json:"assignmentEpoch"`
	AssignmentTimestamp            int64                            `json:"assignmentTimestamp"`
	Topology                       *groupstate.StreamsTopology      `json:"topology"`
	Members                        []StreamsMember                  `json:"members"`
	TargetAssignment               []groupstate.StreamsMemberTarget `json:"targetAssignment"`
}

// StreamsMember is a streams member: metadata, epochs, state and tasks are each null until
// the log has the record that sets them.
type StreamsMember struct {
	MemberID               string                            `json:"memberId"`
	MemberEpoch            *int32                            `json:"memberEpoch"`
	PreviousMemberEpoch    *int32                            `json:"previousMemberEpoch"`
	State                  *string                           `json:"state"`
	Metadata               *groupstate.StreamsMemberMetadata `json:"metadata"`
	AssignedTasks          *groupstate.StreamsTasks          `json:"assignedTasks"`
	TasksPendingRevocation *groupstate.StreamsTasks          `json:"tasksPendingRevocation"`
}

// GroupOf converts a group of the model, with its offsets, for a describe document.
func GroupOf(g groupstate.Group, offs []groupstate.CommittedOffset, names TopicNames) Group {
	d := Group{GroupID: g.GroupID, Type: string(g.Type), State: g.State, Offsets: OffsetsOf(offs)}
	switch {
	case g.Classic != nil:
		c := g.Classic
		d.Classic = &ClassicGroup{ProtocolType: c.ProtocolType, Generation: c.Generation, Protocol: c.Protocol, Leader: c.Leader,
			CurrentStateTimestamp: c.CurrentStateTimestamp, Simple: c.Simple, SubscribedTopicsKnown: c.SubscribedTopicsKnown,
			SubscribedTopics: nonNil(c.SubscribedTopics), Members: nonNil(c.Members)}
	case g.Consumer != nil:
		c := g.Consumer
		cd := &ConsumerGroup{GroupEpoch: c.GroupEpoch, MetadataHash: c.MetadataHash, HasSubscriptionMetadataRecord: c.HasSubscriptionMetadataRecord,
			SubscriptionMetadata: topicMetadataOf(c.SubscriptionMetadata), AssignmentEpoch: c.AssignmentEpoch, AssignmentTimestamp: c.AssignmentTimestamp,
			Members: make([]ConsumerMember, len(c.Members)), TargetAssignment: targetsOf(c.TargetAssignment, names),
			ResolvedRegularExpressions: nonNil(c.ResolvedRegularExpressions)}
		for i, m := range c.Members {
			cd.Members[i] = ConsumerMember{MemberID: m.MemberID, MemberEpoch: m.MemberEpoch, PreviousMemberEpoch: m.PreviousMemberEpoch,
				State: m.StateName, InstanceID: m.InstanceID, RackID: m.RackID, RebalanceTimeoutMs: m.RebalanceTimeoutMs, ClientID: m.ClientID,
				ClientHost: m.ClientHost, SubscribedTopicNames: nonNil(m.SubscribedTopicNames), SubscribedTopicRegex: m.SubscribedTopicRegex,
				ServerAssignor: m.ServerAssignor, ClassicMemberMetadata: m.ClassicMemberMetadata,
				AssignedPartitions:          partitionsOf(m.AssignedPartitions, epochTP, names),
				PartitionsPendingRevocation: partitionsOf(m.PartitionsPendingRevocation, epochTP, names)}
		}
		d.Consumer = cd
	case g.Share != nil:
		s := g.Share
		sd := &ShareGroup{GroupEpoch: s.GroupEpoch, MetadataHash: s.MetadataHash, SubscriptionMetadata: topicMetadataOf(s.SubscriptionMetadata),
			AssignmentEpoch: s.AssignmentEpoch, AssignmentTimestamp: s.AssignmentTimestamp, Members: make([]ShareMember, len(s.Members)),
			TargetAssignment: targetsOf(s.TargetAssignment, names)}
		for i, m := range s.Members {
			sd.Members[i] = ShareMember{MemberID: m.MemberID, MemberEpoch: m.MemberEpoch, PreviousMemberEpoch: m.PreviousMemberEpoch,
				State: m.StateName, RackID: m.RackID, ClientID: m.ClientID, ClientHost: m.ClientHost,
				SubscribedTopicNames: nonNil(m.SubscribedTopicNames), AssignedPartitions: partitionsOf(m.AssignedPartitions, plainTP, names)}
		}
		d.Share = sd
	case g.Streams != nil:
		s := g.Streams
		sd := &StreamsGroup{GroupEpoch: s.GroupEpoch, MetadataHash: s.MetadataHash, ValidatedTopologyEpoch: s.ValidatedTopologyEpoch,
			StoredDescriptionTopologyEpoch: s.StoredDescriptionTopologyEpoch, FailedDescriptionTopologyEpoch: s.FailedDescriptionTopologyEpoch,
			LastAssignmentConfigs: nonNil(s.LastAssignmentConfigs), AssignmentEpoch: s.AssignmentEpoch, AssignmentTimestamp: s.AssignmentTimestamp,
			Topology: s.Topology, Members: make([]StreamsMember, len(s.Members)), TargetAssignment: nonNil(s.TargetAssignment)}
		for i, m := range s.Members {
			md := StreamsMember{MemberID: m.MemberID, MemberEpoch: m.MemberEpoch, PreviousMemberEpoch: m.PreviousMemberEpoch,
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
