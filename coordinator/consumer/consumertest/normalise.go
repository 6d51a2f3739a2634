package consumertest

import (
	"bytes"
	"slices"

	"github.com/coordlog/coordlog/recordcodec"
)

// SortedWithEpochs returns the topics of a record 7 or 8 sorted by topic id and their
// partitions sorted with their assignment epochs, for comparing coordlog's records with
// Kafka's: Kafka lists them in the iteration order of the HashMaps it built them in.
func SortedWithEpochs(in []recordcodec.TopicPartitionsWithEpochs) []recordcodec.TopicPartitionsWithEpochs {
	out := make([]recordcodec.TopicPartitionsWithEpochs, len(in))
	for i, tp := range in {
		idx := make([]int, len(tp.Partitions))
		for k := range idx {
			idx[k] = k
		}
		slices.SortFunc(idx, func(a, b int) int { return int(tp.Partitions[a]) - int(tp.Partitions[b]) })
		n := tp
		n.Partitions = make([]int32, len(idx))
		if tp.AssignmentEpochs != nil {
			n.AssignmentEpochs = make([]int32, len(idx))
		}
		for k, j := range idx {
			n.Partitions[k] = tp.Partitions[j]
			if tp.AssignmentEpochs != nil {
				n.AssignmentEpochs[k] = tp.AssignmentEpochs[j]
			}
		}
		out[i] = n
	}
	slices.SortFunc(out, func(a, b recordcodec.TopicPartitionsWithEpochs) int { return bytes.Compare(a.TopicId[:], b.TopicId[:]) })
	return out
}
