package consumer

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/groupstate"
)

// Describe answers ConsumerGroupDescribe (API 69) from the state: per group its state,
// epochs, the preferred server assignor (else the default), and per member (sorted by id) its
// metadata, its current assignment (assigned plus pending revocation, with topic names;
// topics md does not know are left out), its target and its type (v1: 0 classic, 1
// consumer). A blank group id is INVALID_GROUP_ID; a missing group or one of another type
// GROUP_ID_NOT_FOUND. Authorization is not modelled (AuthorizedOperations stays
// Integer.MIN_VALUE, Kafka's "not requested").
func (c *Coordinator) Describe(st groupstate.View, md *coordinator.Metadata, req *kmsg.ConsumerGroupDescribeRequest) *kmsg.ConsumerGroupDescribeResponse {
	resp := kmsg.NewPtrConsumerGroupDescribeResponse()
	resp.Version = req.Version
	for _, id := range req.Groups {
		dg := kmsg.NewConsumerGroupDescribeResponseGroup()
		dg.Group = id
		g, ok := consumerGroupOf(st, id)
		switch {
		case strings.TrimSpace(id) == "":
			dg.ErrorCode = coordinator.ErrInvalidGroupID
		case !ok:
			dg.ErrorCode = coordinator.ErrGroupIDNotFound
			msg := "Group " + id + " not found."
			if _, exists := st.GroupType(id); exists {
				msg = "Group " + id + " is not a consumer group."
			}
			dg.ErrorMessage = &msg
		default:
			cfg := c.config(id)
			dg.State, dg.Epoch, dg.AssignmentEpoch = g.state(), g.epoch, g.assignmentEpoch
			dg.AssignorName = preferredAssignor(g, nil, nil, cfg)
			for _, mid := range g.memberOrder() {
				m := g.members[mid]
				dm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
				dm.MemberID, dm.InstanceID, dm.RackID, dm.MemberEpoch = m.id, m.instanceID, m.rackID, m.epoch
				dm.ClientID, dm.ClientHost = m.clientID, m.clientHost
				dm.SubscribedTopics = javaStringSet(m.names)
				if dm.SubscribedTopics == nil {
					dm.SubscribedTopics = []string{}
				}
				re := m.regex
				dm.SubscribedTopicRegex = &re
				cur := m.assigned.clone()
				if cur == nil {
					cur = partitions{}
				}
				for t, pm := range m.pending {
					for p, e := range pm {
						put(cur, t, p, e)
					}
				}
				dm.Assignment = describeAssignment(cur.sets(), md)
				dm.TargetAssignment = describeAssignment(g.target[m.id], md)
				dm.MemberType = 1
				if m.usesClassic() {
					dm.MemberType = 0
				}
				dg.Members = append(dg.Members, dm)
			}
		}
		resp.Groups = append(resp.Groups, dg)
	}
	return resp
}

func (p partitions) sets() []TopicPartitions {
	out := make([]TopicPartitions, 0, len(p))
	for t, pm := range p {
		tp := TopicPartitions{Topic: t}
		for n := range pm {
			tp.Partitions = append(tp.Partitions, n)
		}
		out = append(out, tp)
	}
	return out
}

func describeAssignment(a []TopicPartitions, md *coordinator.Metadata) kmsg.Assignment {
	out := kmsg.Assignment{TopicPartitions: []kmsg.AssignmentTopicPartition{}}
	for _, tp := range normalizeTarget(a) {
		name, ok := topicNameByID(md, tp.Topic)
		if !ok {
			continue
		}
		out.TopicPartitions = append(out.TopicPartitions, kmsg.AssignmentTopicPartition{TopicID: tp.Topic, Topic: name, Partitions: tp.Partitions})
	}
	return out
}
