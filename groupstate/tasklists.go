package groupstate

import (
	"encoding/binary"
	"hash/maphash"
)

// sharedTasks shares equal task lists between the members and groups that hold them: the
// target's and the current assignment's active, standby and warm-up lists of a streams member
// are immutable once stored (scratch.go), so a list equal to one stored before can be that
// list. Streams applications run many instances of alike topologies over topics of the same
// partition counts, and their assignors hand out the same task sets again and again (the same
// member of every group of one shape; a member rejoining with the tasks it had): a list met
// again costs a hash and a comparison instead of a copy the collector then has to scan.
//
// It is a cache, not an index: a list is looked up by a hash of its contents and used only
// when equal (a collision just copies); when a table holds maxSharedTaskLists lists it is
// emptied, and what was stored stays valid (only the sharing of later lists with those is
// lost), so memory stays bounded whatever the log holds.
type sharedTasks struct {
	seed  maphash.Seed
	buf   []byte
	plain map[uint64][]TaskIDs
	withE map[uint64][]TaskIDsWithEpochs
}

const maxSharedTaskLists = 1 << 13

func newSharedTasks() *sharedTasks {
	return &sharedTasks{seed: maphash.MakeSeed(), plain: map[uint64][]TaskIDs{}, withE: map[uint64][]TaskIDsWithEpochs{}}
}

func appendInt32s(b []byte, p []int32) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(p)))
	for _, x := range p {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return b
}

func (st *sharedTasks) hash(c []TaskIDs) uint64 {
	b := st.buf[:0]
	for _, t := range c {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(t.SubtopologyID)))
		b = append(b, t.SubtopologyID...)
		b = appendInt32s(b, t.Partitions)
	}
	st.buf = b
	return maphash.Bytes(st.seed, b)
}

func (st *sharedTasks) hashE(c []TaskIDsWithEpochs) uint64 {
	b := st.buf[:0]
	for _, t := range c {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(t.SubtopologyID)))
		b = append(b, t.SubtopologyID...)
		b = appendInt32s(b, t.Partitions)
		b = appendInt32s(b, t.AssignmentEpochs)
	}
	st.buf = b
	return maphash.Bytes(st.seed, b)
}

// find returns the stored list equal to the canonical, non-empty c, and the hash to store a
// copy under when there is none.
func (st *sharedTasks) find(c []TaskIDs) ([]TaskIDs, uint64) {
	h := st.hash(c)
	return st.lookup(h, c), h
}

func (st *sharedTasks) findE(c []TaskIDsWithEpochs) ([]TaskIDsWithEpochs, uint64) {
	h := st.hashE(c)
	return st.lookupE(h, c), h
}

// lookup is find with c's hash known: a list of the same record stored after find missed
// (the standby list equal to the active one just copied) is found this way.
func (st *sharedTasks) lookup(h uint64, c []TaskIDs) []TaskIDs {
	if l, ok := st.plain[h]; ok && sameTaskIDs(l, c) {
		return l
	}
	return nil
}

func (st *sharedTasks) lookupE(h uint64, c []TaskIDsWithEpochs) []TaskIDsWithEpochs {
	if l, ok := st.withE[h]; ok && sameTaskIDsWithEpochs(l, c) {
		return l
	}
	return nil
}

func (st *sharedTasks) keep(h uint64, l []TaskIDs) {
	if len(st.plain) >= maxSharedTaskLists {
		clear(st.plain)
	}
	st.plain[h] = l
}

func (st *sharedTasks) keepE(h uint64, l []TaskIDsWithEpochs) {
	if len(st.withE) >= maxSharedTaskLists {
		clear(st.withE)
	}
	st.withE[h] = l
}
