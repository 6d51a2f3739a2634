package streams

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/groupstate"
)

// Describe answers StreamsGroupDescribe from the replayed state (and the soft state for the
// task offsets and the configured topology, as Kafka does).
func (c *Coordinator) Describe(st groupstate.View, soft *Soft, req *kmsg.StreamsGroupDescribeRequest) *kmsg.StreamsGroupDescribeResponse {
	resp := kmsg.NewPtrStreamsGroupDescribeResponse()
	resp.Version = req.Version
	for _, id := range req.Groups {
		out := kmsg.NewStreamsGroupDescribeResponseGroup()
		out.Group = id
		if strings.TrimSpace(id) == "" {
			out.ErrorCode = coordinator.ErrInvalidGroupID
			resp.Groups = append(resp.Groups, out)
			continue
		}
		g, ok := streamsGroupOf(st, id)
		if !ok {
			out.ErrorCode = coordinator.ErrGroupIDNotFound
			msg := fmt.Sprintf("Group %s not found.", id)
			if _, exists := st.GroupType(id); exists {
				msg = fmt.Sprintf("Group %s is not a streams group.", id)
			}
			out.ErrorMessage = &msg
			resp.Groups = append(resp.Groups, out)
			continue
		}
		out.State, out.Epoch, out.AssignmentEpoch = g.state(), g.epoch, g.assignmentEpoch
		var gs *GroupSoft
		if soft != nil {
			gs = soft.Groups[id]
		}
		if g.topology != nil {
			topo := kmsg.NewStreamsGroupDescribeResponseGroupTopology()
			topo.Epoch = g.topology.Epoch
			var ct *configuredTopology
			if gs != nil && gs.configured != nil && gs.configured.ready() && gs.configuredEpoch == g.topology.Epoch {
				ct = gs.configured
			}
			for _, s := range g.topology.Subtopologies {
				d := kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology{
					SubtopologyID:         s.SubtopologyID,
					SourceTopics:          sortedStrings(s.SourceTopics),
					RepartitionSinkTopics: sortedStrings(s.RepartitionSinkTopics),
				}
				d.StateChangelogTopics = describeTopicInfos(s.StateChangelogTopics, ct, s.SubtopologyID, true)
				d.RepartitionSourceTopics = describeTopicInfos(s.RepartitionSourceTopics, ct, s.SubtopologyID, false)
				topo.Subtopologies = append(topo.Subtopologies, d)
			}
			out.Topology = &topo
		}
		if req.Version >= 1 {
			name := c.config(id).Assignor
			out.AssignorName = &name
		}
		for _, mid := range g.order {
			m := g.members[mid]
			dm := kmsg.NewStreamsGroupDescribeResponseGroupMember()
			dm.MemberID, dm.MemberEpoch, dm.InstanceID, dm.RackID = m.id, m.epoch, m.instanceID, m.rackID
			dm.ClientID, dm.ClientHost, dm.TopologyEpoch, dm.ProcessID = m.clientID, m.clientHost, m.topologyEpoch, m.processID
			if m.endpoint != nil {
				dm.UserEndpoint = &kmsg.StreamsGroupDescribeResponseGroupMemberUserEndpoint{Host: m.endpoint.Host, Port: m.endpoint.Port}
			}
			for _, t := range m.clientTags {
				dm.ClientTags = append(dm.ClientTags, kmsg.StreamsGroupDescribeResponseGroupMemberClientTag{Key: t.k, Value: t.v})
			}
			if gs != nil {
				if ms := gs.Members[mid]; ms != nil {
					dm.TaskOffsets = describeOffsets(ms.TaskOffsets)
					dm.TaskEndOffsets = describeOffsets(ms.TaskEndOffsets)
				}
			}
			dm.Assignment = kmsg.StreamsAssignment{ActiveTasks: toResponseTasks(m.assigned.active), StandbyTasks: toResponseTasks(m.assigned.standby), WarmupTasks: toResponseTasks(m.assigned.warmup)}
			t := g.target[mid]
			dm.TargetAssignment = kmsg.StreamsAssignment{ActiveTasks: toResponseTasks(t.active), StandbyTasks: toResponseTasks(t.standby), WarmupTasks: toResponseTasks(nil)}
			out.Members = append(out.Members, dm)
		}
		resp.Groups = append(resp.Groups, out)
	}
	return resp
}

func sortedStrings(s []string) []string {
	out := append([]string{}, s...)
	sortStrings(out)
	return out
}

func describeTopicInfos(in []groupstate.StreamsTopicInfo, ct *configuredTopology, sub string, changelog bool) []kmsg.TopicInfo {
	out := []kmsg.TopicInfo{}
	for _, ti := range in {
		n := ti.Partitions
		if ct != nil {
			if changelog {
				if st := ct.byID[sub]; st != nil {
					n = st.numTasks
				}
			} else if p, ok := ct.partitions[ti.Name]; ok {
				n = p
			}
		}
		k := kmsg.TopicInfo{Topic: ti.Name, NumPartitions: n, ReplicationFactor: ti.ReplicationFactor}
		for _, c := range ti.TopicConfigs {
			k.Configs = append(k.Configs, kmsg.TopicInfoConfig{Key: c.Key, Value: c.Value})
		}
		out = append(out, k)
	}
	sortTopicInfos(out)
	return out
}

func describeOffsets(m map[TaskID]int64) []kmsg.TaskOffset {
	if m == nil {
		return nil
	}
	tm := taskMap{}
	for t := range m {
		tm[t] = 0
	}
	out := []kmsg.TaskOffset{}
	for _, t := range tm.sorted() {
		out = append(out, kmsg.TaskOffset{SubtopologyID: t.Subtopology, Partition: t.Partition, Offset: m[t]})
	}
	return out
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func sortTopicInfos(s []kmsg.TopicInfo) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].Topic < s[j-1].Topic; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
