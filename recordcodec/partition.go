package recordcodec

import "unicode/utf16"

// JavaStringHashCode is Java's String.hashCode: h = 31*h + c over the UTF-16 code units of s,
// in wrapping int32 arithmetic. Invalid UTF-8 bytes count as U+FFFD, as Java decodes them.
func JavaStringHashCode(s string) int32 {
	var h int32
	for _, r := range s { // invalid bytes come out as U+FFFD
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + int32(hi)
			h = 31*h + int32(lo)
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// PartitionFor returns the __consumer_offsets partition of a group, as Kafka's
// GroupCoordinatorService.partitionFor computes it: Utils.abs(hashCode) % partitions, where
// Utils.abs maps Integer.MIN_VALUE to 0. It panics if partitions is not positive.
func PartitionFor(groupID string, partitions int32) int32 {
	if partitions <= 0 {
		panic("recordcodec: PartitionFor needs a positive partition count")
	}
	h := JavaStringHashCode(groupID)
	if h == -1<<31 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % partitions
}
