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
	plain listTable[TaskIDs]
	withE listTable[TaskIDsWithEpochs]
}

const maxSharedTaskLists = 1 << 13

func newSharedTasks() *sharedTasks {
	return &sharedTasks{seed: maphash.MakeSeed(),
		plain: listTable[TaskIDs]{byHash: map[uint64][]TaskIDs{}, same: sameTaskIDs},
		withE: listTable[TaskIDsWithEpochs]{byHash: map[uint64][]TaskIDsWithEpochs{}, same: sameTaskIDsWithEpochs}}
}

// listTable is one of sharedTasks' tables: stored lists by the hash of their contents.
type listTable[E any] struct {
	byHash map[uint64][]E
	same   func(a, b []E) bool
}

// lookup returns the stored list equal to c, whose hash is h, or nil. Besides find, it finds
// a list of the same record stored after find missed (the standby list equal to the active
// one just copied).
func (t *listTable[E]) lookup(h uint64, c []E) []E {
	if l, ok := t.byHash[h]; ok && t.same(l, c) {
		return l
	}
	return nil
}

// keep stores l under h, emptying the table first when it is full.
func (t *listTable[E]) keep(h uint64, l []E) {
	if len(t.byHash) >= maxSharedTaskLists {
		clear(t.byHash)
	}
	t.byHash[h] = l
}

func appendInt32s(b []byte, p []int32) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(p)))
	for _, x := range p {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return b
}

// appendTask lays out one entry of a list for hashing: its subtopology id and partitions.
func appendTask(b []byte, id string, partitions []int32) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(id)))
	return appendInt32s(append(b, id...), partitions)
}

func (st *sharedTasks) hash(c []TaskIDs) uint64 {
	b := st.buf[:0]
	for _, t := range c {
		b = appendTask(b, t.SubtopologyID, t.Partitions)
	}
	st.buf = b
	return maphash.Bytes(st.seed, b)
}

func (st *sharedTasks) hashE(c []TaskIDsWithEpochs) uint64 {
	b := st.buf[:0]
	for _, t := range c {
		b = appendInt32s(appendTask(b, t.SubtopologyID, t.Partitions), t.AssignmentEpochs)
	}
	st.buf = b
	return maphash.Bytes(st.seed, b)
}

// find returns the stored list equal to the canonical, non-empty c, and the hash to store a
// copy under when there is none.
func (st *sharedTasks) find(c []TaskIDs) ([]TaskIDs, uint64) {
	h := st.hash(c)
	return st.plain.lookup(h, c), h
}

func (st *sharedTasks) findE(c []TaskIDsWithEpochs) ([]TaskIDsWithEpochs, uint64) {
	h := st.hashE(c)
	return st.withE.lookup(h, c), h
}
