package prompt

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"strings"
	"testing"
	"time"
)

// Every image decodes as a PNG of its size; its data URI is no longer than
// Size and within 0.2 % and 256 bytes of it, over sizes that end blocks,
// chunks and base64 groups at every offset.
func TestMakeDecodesWithinSize(t *testing.T) {
	for _, d := range [][2]int{{16, 16}, {17, 23}, {28, 28}, {255, 257}, {448, 448}, {512, 384}, {1000, 131}, {2048, 64}, {1024, 1024}} {
		w, h := d[0], d[1]
		for i, uri := range MakeImage(7, 2, w, h) {
			b64, ok := bytes.CutPrefix(uri, []byte(ImagePrefix))
			if !ok {
				t.Fatalf("%dx%d: %.40q has no %q", w, h, uri, ImagePrefix)
			}
			raw, err := base64.StdEncoding.DecodeString(string(b64))
			if err != nil {
				t.Fatalf("%dx%d: base64: %v", w, h, err)
			}
			img, err := png.Decode(bytes.NewReader(raw))
			if err != nil {
				t.Fatalf("%dx%d image %d: %v", w, h, i, err)
			}
			if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
				t.Errorf("%dx%d image %d decodes as %v", w, h, i, b)
			}
			n, bound := int64(len(uri)), ImageSize(w, h)
			if n > bound || bound-n > max(bound/500, 256) {
				t.Errorf("%dx%d: data URI of %d bytes, bound %d", w, h, n, bound)
			}
		}
	}
}

// The same seed makes the same images; another seed, or the next image of
// a request, others.
func TestMakeIsSeeded(t *testing.T) {
	a, b, c := MakeImage(1, 2, 32, 32), MakeImage(1, 2, 32, 32), MakeImage(2, 2, 32, 32)
	if !bytes.Equal(a[0], b[0]) || !bytes.Equal(a[1], b[1]) {
		t.Error("the same seed made other images")
	}
	if bytes.Equal(a[0], a[1]) || bytes.Equal(a[0], c[0]) || bytes.Equal(a[1], c[1]) {
		t.Error("two images are the same")
	}
	if ImageSeed("ref: one two three four") == ImageSeed("ref: one two three five") {
		t.Error("two prompts give one seed")
	}
}

// A data URI needs no escaping in JSON: base64's alphabet and the prefix.
func TestDataURIIsPlainJSON(t *testing.T) {
	uri := string(MakeImage(3, 1, 40, 40)[0])
	if strings.ContainsAny(uri, "\"\\<>&\x00\n") {
		t.Errorf("%q needs escaping in JSON", uri)
	}
}

func BenchmarkMake512(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		MakeImage(uint64(i), 1, 512, 512)
	}
}

// No more than MaxEncoders images are made at once: with every encoder
// taken, Make waits until one is given back.
func TestEncodersBounded(t *testing.T) {
	for range MaxImageEncoders {
		encoding <- struct{}{}
	}
	done := make(chan struct{})
	go func() { MakeImage(1, 1, 16, 16); close(done) }()
	select {
	case <-done:
		t.Fatal("an image was made while every encoder was taken")
	case <-time.After(50 * time.Millisecond):
	}
	for range MaxImageEncoders {
		<-encoding
	}
	<-done
}
