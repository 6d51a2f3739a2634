package eventlogtest

import "github.com/coordlog/coordlog/eventlog"

// Scribbling returns src with iterators that hand out a private copy of each batch and
// overwrite that copy's key, value and header bytes when Next or Close is called, with
// deterministic pseudo-random bytes: two strings that were equal are not equal afterwards
// (a constant fill would keep equal-length keys equal, and small Go maps compare keys
// without hashing them, so a map keyed by aliased strings would still seem to work).
func Scribbling(src eventlog.Source) eventlog.Source { return scribbling{src} }

type scribbling struct{ eventlog.Source }

func (s scribbling) Batches(p int32, from int64) (eventlog.Iterator, error) {
	it, err := s.Source.Batches(p, from)
	if err != nil {
		return nil, err
	}
	return &scribblingIterator{Iterator: it}, nil
}

type scribblingIterator struct {
	eventlog.Iterator
	cur  *eventlog.Batch
	seed uint64
}

func (it *scribblingIterator) Next() bool {
	it.scribble()
	if !it.Iterator.Next() {
		return false
	}
	it.cur = it.Iterator.Batch().Clone()
	return true
}

func (it *scribblingIterator) Batch() *eventlog.Batch { return it.cur }

func (it *scribblingIterator) Close() error {
	it.scribble()
	return it.Iterator.Close()
}

func (it *scribblingIterator) scribble() {
	if it.cur == nil {
		return
	}
	for i := range it.cur.Records {
		r := &it.cur.Records[i]
		it.fill(r.Key)
		it.fill(r.Value)
		for j := range r.Headers {
			it.fill(r.Headers[j].Key)
			it.fill(r.Headers[j].Value)
		}
	}
	it.cur = nil
}

func (it *scribblingIterator) fill(p []byte) {
	for i := range p {
		it.seed = it.seed*6364136223846793005 + 1442695040888963407 // Knuth's MMIX LCG
		p[i] = byte(it.seed >> 56)
	}
}
