package eventlog

import (
	"fmt"
	"slices"
	"sort"
)

// Memory is a Source over batches held in memory, for tests, simulations and small tools: the
// batches a coordinator decided, or a log built record by record. Batches are kept as given
// (not copied): the caller must not change them after Append.
type Memory struct {
	parts map[int32][]*Batch
}

// NewMemory returns a source holding batches (see Append).
func NewMemory(batches ...*Batch) (*Memory, error) {
	m := &Memory{parts: map[int32][]*Batch{}}
	for _, b := range batches {
		if err := m.Append(b); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Append adds b to its partition. Its base offset must be at or after the partition's next
// offset (gaps are allowed, as compaction leaves them).
func (m *Memory) Append(b *Batch) error {
	bs := m.parts[b.Partition]
	if n := len(bs); n > 0 && b.BaseOffset <= bs[n-1].LastOffset {
		return fmt.Errorf("eventlog: batch at offset %d of partition %d is not after offset %d", b.BaseOffset, b.Partition, bs[n-1].LastOffset)
	}
	if b.LastOffset < b.BaseOffset {
		return fmt.Errorf("eventlog: batch at offset %d of partition %d ends before it starts (last offset %d)", b.BaseOffset, b.Partition, b.LastOffset)
	}
	m.parts[b.Partition] = append(bs, b)
	return nil
}

// Partitions implements Source.
func (m *Memory) Partitions() ([]int32, error) {
	ps := make([]int32, 0, len(m.parts))
	for p := range m.parts {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps, nil
}

// Offsets implements Source.
func (m *Memory) Offsets(p int32) (first, next int64, err error) {
	bs := m.parts[p]
	if len(bs) == 0 {
		return 0, 0, nil
	}
	return bs[0].BaseOffset, bs[len(bs)-1].NextOffset(), nil
}

// Batches implements Source.
func (m *Memory) Batches(p int32, from int64) (Iterator, error) {
	bs := m.parts[p]
	i := sort.Search(len(bs), func(i int) bool { return bs[i].LastOffset >= from })
	return &memoryIter{bs: bs[i:], i: -1}, nil
}

type memoryIter struct {
	bs []*Batch
	i  int
}

func (it *memoryIter) Next() bool    { it.i++; return it.i < len(it.bs) }
func (it *memoryIter) Batch() *Batch { return it.bs[it.i] }
func (it *memoryIter) Err() error    { return nil }
func (it *memoryIter) Close() error  { return nil }
