package segment

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// errTooLarge is returned when a payload decompresses past the reader's limit: a bound on memory
// that also stops decompression bombs.
var errTooLarge = errors.New("decompressed size exceeds the limit")

// xerialMagic starts snappy-java's stream framing (SnappyOutputStream), which Kafka's Java
// clients use: a 16-byte header (magic, version, compatible version), then chunks of
// [int32 big-endian length][raw snappy block].
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// decompressor holds reusable decoder state; one per iterator (not safe for concurrent use).
type decompressor struct {
	// limit bounds the output of the next decompress call; maxMemory bounds every call (the
	// zstd decoder's window is sized by it once).
	limit     int
	maxMemory int
	out       []byte // reused output buffer: the decompressed payload aliases it until the next call
	gz        *gzip.Reader
	zs        *zstd.Decoder
	br        bytes.Reader
}

func (d *decompressor) close() {
	if d.zs != nil {
		d.zs.Close()
		d.zs = nil
	}
}

// decompress returns the decompressed payload, which aliases d.out.
func (d *decompressor) decompress(codec eventlog.Codec, src []byte) ([]byte, error) {
	var out []byte
	var err error
	switch codec {
	case eventlog.CodecGzip:
		out, err = d.gunzip(src)
	case eventlog.CodecSnappy:
		out, err = d.unsnappy(src)
	case eventlog.CodecLZ4:
		out, err = d.unlz4(src)
	case eventlog.CodecZstd:
		out, err = d.unzstd(src)
	default:
		return nil, fmt.Errorf("codec %s", codec)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", codec, err)
	}
	d.out = out[:0]
	return out, nil
}

func (d *decompressor) gunzip(src []byte) ([]byte, error) {
	d.br.Reset(src)
	if d.gz == nil {
		gz, err := gzip.NewReader(&d.br)
		if err != nil {
			return nil, err
		}
		d.gz = gz
	} else if err := d.gz.Reset(&d.br); err != nil {
		return nil, err
	}
	out := d.out[:0]
	for {
		if len(out) == cap(out) {
			if len(out) > d.limit {
				return nil, errTooLarge
			}
			out = append(out, 0)[:len(out)]
		}
		n, err := d.gz.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(out) > d.limit {
		return nil, errTooLarge
	}
	return out, nil
}

func (d *decompressor) snappyBlock(dst, src []byte) ([]byte, error) {
	n, err := s2.DecodedLen(src)
	if err != nil {
		return nil, err
	}
	if len(dst)+n > d.limit {
		return nil, errTooLarge
	}
	if cap(dst)-len(dst) < n {
		dst = append(dst[:cap(dst)], make([]byte, len(dst)+n-cap(dst))...)[:len(dst)]
	}
	out, err := s2.Decode(dst[len(dst):len(dst)+n], src)
	if err != nil {
		return nil, err
	}
	return dst[:len(dst)+len(out)], nil
}

// unsnappy accepts both xerial framing (what Kafka's Java producers write) and a raw snappy
// block (what some non-Java producers write); Kafka's own reader accepts both too.
func (d *decompressor) unsnappy(src []byte) ([]byte, error) {
	if !bytes.HasPrefix(src, xerialMagic) {
		return d.snappyBlock(d.out[:0], src)
	}
	if len(src) < 16 {
		return nil, errors.New("xerial header truncated")
	}
	out := d.out[:0]
	for p := 16; p < len(src); {
		if len(src)-p < 4 {
			return nil, errors.New("xerial chunk length truncated")
		}
		n := int(binary.BigEndian.Uint32(src[p:]))
		p += 4
		if n < 0 || n > len(src)-p {
			return nil, errors.New("xerial chunk runs past the payload")
		}
		var err error
		if out, err = d.snappyBlock(out, src[p:p+n]); err != nil {
			return nil, err
		}
		p += n
	}
	return out, nil
}

// unlz4 decodes an LZ4 frame. It parses the frame itself (blocks are decoded by pierrec/lz4) so
// that the output is bounded and so that the header checksum is not verified: Kafka's magic-0
// writer computed it wrongly (KAFKA-3160), and the batch CRC already covers these bytes.
func (d *decompressor) unlz4(src []byte) ([]byte, error) {
	const frameMagic = 0x184D2204
	if len(src) < 7 || binary.LittleEndian.Uint32(src) != frameMagic {
		return nil, errors.New("not an LZ4 frame")
	}
	flg, bd := src[4], src[5]
	if flg>>6 != 1 {
		return nil, fmt.Errorf("LZ4 frame version %d", flg>>6)
	}
	independent := flg&0x20 != 0
	blockChecksum := flg&0x10 != 0
	p := 6
	if flg&0x08 != 0 {
		p += 8 // content size
	}
	if flg&0x01 != 0 {
		p += 4 // dictionary id
	}
	p++ // header checksum, deliberately not verified (see above)
	maxBlock := 0
	switch (bd >> 4) & 7 {
	case 4:
		maxBlock = 64 << 10
	case 5:
		maxBlock = 256 << 10
	case 6:
		maxBlock = 1 << 20
	case 7:
		maxBlock = 4 << 20
	default:
		return nil, fmt.Errorf("LZ4 block size code %d", (bd>>4)&7)
	}
	out := d.out[:0]
	for {
		if len(src)-p < 4 {
			return nil, errors.New("LZ4 frame truncated")
		}
		size := binary.LittleEndian.Uint32(src[p:])
		p += 4
		if size == 0 {
			break // end mark; a content checksum may follow, covered by the batch CRC
		}
		raw := size&0x80000000 != 0
		n := int(size & 0x7fffffff)
		if n > len(src)-p {
			return nil, errors.New("LZ4 block runs past the payload")
		}
		block := src[p : p+n]
		p += n
		if blockChecksum {
			p += 4
		}
		if raw {
			if len(out)+n > d.limit {
				return nil, errTooLarge
			}
			out = append(out, block...)
			continue
		}
		if cap(out)-len(out) < maxBlock {
			grown := make([]byte, len(out), len(out)+maxBlock+len(out)/2)
			copy(grown, out)
			out = grown
		}
		dst := out[len(out) : len(out)+maxBlock]
		var m int
		var err error
		if independent || len(out) == 0 {
			m, err = lz4.UncompressBlock(block, dst)
		} else {
			dict := out[max(0, len(out)-64<<10):]
			m, err = lz4.UncompressBlockWithDict(block, dst, dict)
		}
		if err != nil {
			return nil, err
		}
		out = out[:len(out)+m]
		if len(out) > d.limit {
			return nil, errTooLarge
		}
	}
	return out, nil
}

func (d *decompressor) unzstd(src []byte) ([]byte, error) {
	if d.zs == nil {
		zs, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(d.maxMemory)), zstd.WithDecoderLowmem(true))
		if err != nil {
			return nil, err
		}
		d.zs = zs
	}
	out, err := d.zs.DecodeAll(src, d.out[:0])
	if err != nil {
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			return nil, errTooLarge
		}
		return nil, err
	}
	if len(out) > d.limit {
		return nil, errTooLarge
	}
	return out, nil
}

// compressor holds reusable encoder state for the writer.
type compressor struct {
	rawSnappy bool
	buf       bytes.Buffer
	gz        *gzip.Writer
	zs        *zstd.Encoder
	lz        *lz4.Writer
}

func (c *compressor) close() {
	if c.zs != nil {
		c.zs.Close()
	}
}

// compress appends the compressed form of src to dst.
func (c *compressor) compress(dst []byte, codec eventlog.Codec, src []byte) ([]byte, error) {
	switch codec {
	case eventlog.CodecNone:
		return append(dst, src...), nil
	case eventlog.CodecGzip:
		c.buf.Reset()
		if c.gz == nil {
			c.gz = gzip.NewWriter(&c.buf)
		} else {
			c.gz.Reset(&c.buf)
		}
		if _, err := c.gz.Write(src); err != nil {
			return nil, err
		}
		if err := c.gz.Close(); err != nil {
			return nil, err
		}
		return append(dst, c.buf.Bytes()...), nil
	case eventlog.CodecSnappy:
		if c.rawSnappy {
			return append(dst, s2.EncodeSnappy(nil, src)...), nil
		}
		// xerial framing, 32 KiB chunks like snappy-java's default block size.
		dst = append(dst, xerialMagic...)
		dst = binary.BigEndian.AppendUint32(dst, 1) // version
		dst = binary.BigEndian.AppendUint32(dst, 1) // compatible version
		for len(src) > 0 {
			n := min(len(src), 32<<10)
			block := s2.EncodeSnappy(nil, src[:n])
			dst = binary.BigEndian.AppendUint32(dst, uint32(len(block)))
			dst = append(dst, block...)
			src = src[n:]
		}
		return dst, nil
	case eventlog.CodecLZ4:
		c.buf.Reset()
		if c.lz == nil {
			c.lz = lz4.NewWriter(&c.buf)
		} else {
			c.lz.Reset(&c.buf)
		}
		if _, err := c.lz.Write(src); err != nil {
			return nil, err
		}
		if err := c.lz.Close(); err != nil {
			return nil, err
		}
		return append(dst, c.buf.Bytes()...), nil
	case eventlog.CodecZstd:
		if c.zs == nil {
			zs, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
			if err != nil {
				return nil, err
			}
			c.zs = zs
		}
		return c.zs.EncodeAll(src, dst), nil
	}
	return nil, fmt.Errorf("cannot compress with codec %s", codec)
}
