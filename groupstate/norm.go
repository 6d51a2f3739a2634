package groupstate

import (
	"slices"
	"strings"
)

// int32Set returns the sorted, deduplicated partitions (Java: new HashSet<>(list)); nil
// when empty.
func int32Set(p []int32) []int32 {
	if len(p) == 0 {
		return nil
	}
	out := slices.Clone(p)
	slices.Sort(out)
	return slices.Compact(out)
}

// stringSet returns the sorted, deduplicated strings; nil when empty.
func stringSet(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// partitionEpochs pairs partitions with epochs as Kafka's HashMap<Integer,Integer> puts do
// (a repeated partition keeps the last epoch) and returns them sorted by partition.
func partitionEpochs(parts []int32, epoch func(i int) int32) ([]int32, []int32) {
	if len(parts) == 0 {
		return nil, nil
	}
	m := make(map[int32]int32, len(parts))
	for i, p := range parts {
		m[p] = epoch(i)
	}
	ps := make([]int32, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	es := make([]int32, len(ps))
	for i, p := range ps {
		es[i] = m[p]
	}
	return ps, es
}

// topicPartitionSets converts a target-assignment style list (Collectors.toMap keyed by topic
// id: a repeated topic id is an error when strict, else the last one wins as with HashMap.put)
// into a view list sorted by topic id. dup is the first repeated topic id.
func topicPartitionSets(in []TopicPartitions, strict bool) (out []TopicPartitions, dup *Uuid) {
	if len(in) == 0 {
		return nil, nil
	}
	idx := make(map[Uuid]int, len(in))
	for _, tp := range in {
		if i, ok := idx[tp.TopicID]; ok {
			if strict {
				id := tp.TopicID
				return nil, &id
			}
			out[i].Partitions = int32Set(tp.Partitions)
			continue
		}
		idx[tp.TopicID] = len(out)
		out = append(out, TopicPartitions{TopicID: tp.TopicID, Partitions: int32Set(tp.Partitions)})
	}
	slices.SortFunc(out, func(a, b TopicPartitions) int { return a.TopicID.Compare(b.TopicID) })
	return out, nil
}

// keyValueMap converts a list collected into a map (Collectors.toMap when strict) into a list
// sorted by key. dup is the first repeated key.
func keyValueMap(in []KeyValue, strict bool) (out []KeyValue, dup *string) {
	if len(in) == 0 {
		return nil, nil
	}
	idx := make(map[string]int, len(in))
	for _, kv := range in {
		if i, ok := idx[kv.Key]; ok {
			if strict {
				k := kv.Key
				return nil, &k
			}
			out[i].Value = kv.Value
			continue
		}
		idx[kv.Key] = len(out)
		out = append(out, kv)
	}
	slices.SortFunc(out, func(a, b KeyValue) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
