// The synthetic images a vision request sends: PNGs seeded per request, so
// every request's differ and a burst repeats with its seed, written as data
// URIs whose size is bounded before they are made.

package prompt

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/fnv"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"sync"

	"github.com/llmprobe/llmprobe/config"
)

// ImagePrefix starts every data URI this package writes.
const ImagePrefix = "data:image/png;base64,"

// ImageSeed is the image seed of a request whose prompt text is text: the text
// holds the request's nonce, drawn from its burst's seed and its index (and
// a comparison round's salt), so the images follow the prompt.
func ImageSeed(text string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(text))
	return h.Sum64()
}

// ImagesOf is the images a request of a scenario with im (nil: none) sends,
// its prompt's text being text.
func ImagesOf(im *config.Images, text string) [][]byte {
	if im == nil {
		return nil
	}
	return MakeImage(ImageSeed(text), im.Count, im.Width, im.Height)
}

// MakeImage returns n data URIs of w×h images seeded by seed, each different.
func MakeImage(seed uint64, n, w, h int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = dataURI(seed, i, w, h)
	}
	return out
}

// MaxImageEncoders bounds the images made at once, process-wide: each holds its
// pixels and a PNG encoder's buffers while it is made (EncodeBytes), and
// more at once than cores would not be made sooner.
const MaxImageEncoders = 4

// encoderBytes bounds a PNG encoder's buffers: its zlib writer is about
// 720 KiB.
const encoderBytes = 1 << 20

// ImageEncodeBytes bounds what making w×h images holds at once, beside the data
// URIs made: MaxEncoders images' pixels and encoders.
func ImageEncodeBytes(w, h int) int64 { return MaxImageEncoders * (int64(w)*int64(h) + encoderBytes) }

var encoding = make(chan struct{}, MaxImageEncoders)

// Pixels are noise over a seeded palette of 256 opaque colours, one byte
// each, stored without compression: no pattern an engine or a proxy could
// shortcut, and a size known from the dimensions alone (Size).
func dataURI(seed uint64, i, w, h int) []byte {
	encoding <- struct{}{}
	defer func() { <-encoding }()
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	binary.LittleEndian.PutUint64(key[8:], uint64(i))
	rng := rand.NewChaCha8(key)
	palette := make(color.Palette, 256)
	var rgb [3]byte
	for k := range palette {
		_, _ = rng.Read(rgb[:])
		palette[k] = color.RGBA{rgb[0], rgb[1], rgb[2], 0xff}
	}
	img := image.NewPaletted(image.Rect(0, 0, w, h), palette)
	_, _ = rng.Read(img.Pix) // ChaCha8's Read never fails
	buf := bytes.NewBuffer(make([]byte, 0, ImageSize(w, h)))
	buf.WriteString(ImagePrefix)
	b64 := base64.NewEncoder(base64.StdEncoding, buf)
	// Encoding into memory of a valid image cannot fail.
	_ = encoder.Encode(b64, img)
	_ = b64.Close()
	return buf.Bytes()
}

// encoder reuses its zlib writer (hundreds of KiB of tables) across images.
var encoder = png.Encoder{CompressionLevel: png.NoCompression, BufferPool: &pool{}}

type pool struct{ p sync.Pool }

func (p *pool) Get() *png.EncoderBuffer {
	b, _ := p.p.Get().(*png.EncoderBuffer)
	return b
}

func (p *pool) Put(b *png.EncoderBuffer) { p.p.Put(b) }

// Parts of a stored PNG of 8-bit palette indices, in bytes: signature,
// IHDR, PLTE of 256 colours and IEND, each chunk with its 12 bytes of
// length, type and CRC; zlib's header and checksum, and the empty final
// block the deflate writer closes with.
const (
	pngFixed   = 8 + (12 + 13) + (12 + 3*256) + 12
	zlibFixed  = 2 + 4 + 5
	storeBlock = 65535 // bytes of one stored deflate block, 5 bytes of header each
	idatSize   = 1 << 15
)

// ImageSize bounds the length of one data URI of a w×h image, in bytes: the
// PNG's exact length but for how its IDAT chunks split, counted here at
// their most, then base64 of it.
func ImageSize(w, h int) int64 {
	raw := int64(h) * int64(1+w) // a filter byte before each row
	blocks := (raw + storeBlock - 1) / storeBlock
	z := raw + 5*blocks + zlibFixed
	// The encoder's buffered writer passes a large write through whole: a
	// chunk per buffer flush, and at most two more per stored block.
	chunks := (z+idatSize-1)/idatSize + 2*blocks + 1
	n := pngFixed + z + 12*chunks
	return int64(len(ImagePrefix)) + 4*((n+2)/3)
}
