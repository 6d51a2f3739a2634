package groupstate

import "strings"

// ImageCache keeps the entries (one id's group and offsets, image.go) of a state's last image,
// so that the next image of the same state copies the entries of the ids that no mutator
// touched since, instead of encoding them again. An entry's bytes depend only on its id's
// group and offsets, so an image written with the cache is byte for byte the image written
// without it. It serves periodic snapshots of a running state, where most groups do not
// change between two snapshots; it holds about one image's bytes.
//
// Use: State.ImageCache attaches it (and starts recording the touched ids); for an image,
// Begin(plan), then AppendImagePartCached for each part (concurrently, as AppendImagePart),
// then Commit once every part was written. An image abandoned before Commit leaves the cache
// as it was.
type ImageCache struct {
	s       *State
	entries map[string]string // id -> its entry in the last committed image
	next    [][]cachedEntry   // per part of the image being written
}

type cachedEntry struct{ id, data string }

// ImageCache returns the state's image cache, attaching one (empty) the first time.
func (s *State) ImageCache() *ImageCache {
	if s.cache == nil {
		s.cache = &ImageCache{s: s, entries: map[string]string{}}
		s.changed = map[string]struct{}{}
	}
	return s.cache
}

// touch records that a mutator may change id's group or offsets.
func (s *State) touch(id string) {
	if s.changed == nil {
		return
	}
	if _, ok := s.changed[id]; !ok {
		s.changed[strings.Clone(id)] = struct{}{}
	}
}

// Begin prepares the cache for an image of plan.
func (c *ImageCache) Begin(plan *ImagePlan) {
	c.next = make([][]cachedEntry, plan.NumParts())
}

// AppendImagePartCached is AppendImagePart that copies the cached entries of untouched ids and
// records every entry of the part for the next image. Parts may be written concurrently.
func (v View) AppendImagePartCached(b []byte, plan *ImagePlan, i int, c *ImageCache) []byte {
	s := v.s
	enc := imageEncoder{w: imageWriter{b: b}, part: &partScratch{}}
	ids := plan.ids[plan.cuts[i]:plan.cuts[i+1]]
	n := len(ids)
	enc.partHeader(&n)
	next := make([]cachedEntry, 0, len(ids))
	for _, id := range ids {
		if data, ok := c.entries[id]; ok {
			if _, touched := s.changed[id]; !touched {
				enc.w.b = append(enc.w.b, data...)
				next = append(next, cachedEntry{id, data})
				continue
			}
		}
		start := len(enc.w.b)
		e := imageEntry{id: id, g: s.groups[id], off: s.offsets[id]}
		enc.entry(&e, 0, "")
		next = append(next, cachedEntry{id, string(enc.w.b[start:])})
	}
	c.next[i] = next
	return enc.w.b
}

// Commit makes the image just written (every part of the plan given to Begin) the cache's,
// and forgets the touched ids.
func (c *ImageCache) Commit() {
	n := 0
	for _, p := range c.next {
		n += len(p)
	}
	entries := make(map[string]string, n)
	for _, p := range c.next {
		for _, e := range p {
			entries[e.id] = e.data
		}
	}
	c.entries, c.next = entries, nil
	clear(c.s.changed)
}
