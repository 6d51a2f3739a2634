package eventlog

// Source is a readable Kafka-shaped log of one or more __consumer_offsets partitions. The
// segment reader (eventlog/segment) and the Pebble log (eventlog/pebblelog) both implement it,
// so the replay engine reads either.
type Source interface {
	// Partitions lists the partitions the source holds, in ascending order.
	Partitions() ([]int32, error)
	// Batches iterates the batches of partition p in offset order, starting with the batch that
	// contains offset from (returned whole) or, when from falls in a gap, the first batch after
	// it. Batches whose LastOffset < from are skipped.
	Batches(p int32, from int64) (Iterator, error)
	// Offsets returns the first offset present in partition p (the BaseOffset of its first
	// batch) and the next offset (the LastOffset+1 of its last batch). For an empty partition
	// first == next.
	Offsets(p int32) (first, next int64, err error)
}

// Iterator walks batches. The usual loop is
//
//	it, err := src.Batches(p, from)
//	if err != nil { ... }
//	defer it.Close()
//	for it.Next() {
//		b := it.Batch()
//		...
//	}
//	if err := it.Err(); err != nil { ... }
//
// The *Batch returned by Batch, its Records and every byte slice in them are owned by the
// iterator and stay valid only until the next call to Next or Close: iterators reuse their
// buffers so that memory stays bounded and decoding allocates almost nothing. Use Batch.Clone
// to keep a batch.
type Iterator interface {
	// Next advances to the next batch and reports whether there is one. It returns false at
	// the end of the partition or on an error (see Err).
	Next() bool
	// Batch returns the current batch.
	Batch() *Batch
	// Err returns the error that stopped the iteration, nil at a clean end.
	Err() error
	// Close releases the iterator's files and buffers. It is safe to call more than once.
	Close() error
}
