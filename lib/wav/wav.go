// Package wav reads and writes the WAV files of transcriptions: a file's
// length from its data chunk and its INFO comment, every chunk's size held
// to the file before go-audio's decoder allocates it.
package wav

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/go-audio/audio"
	gowav "github.com/go-audio/wav"
)

// File is what a WAV file says of itself.
type File struct {
	// Length is the audio's, from the samples the file holds.
	Length time.Duration
	// Comment is its INFO comment (ICMT): llmprobe's test clips carry
	// their reference transcript there, for the sim to "hear".
	Comment string
}

// ErrInvalid is a file that is no WAV this package reads.
var ErrInvalid = errors.New("is not a PCM WAV file (RIFF WAVE with fmt and data chunks); convert it with ffmpeg -i in.mp3 -ar 16000 -ac 1 out.wav")

// Read reads WAV file b.
func Read(b []byte) (File, error) {
	if !chunksFit(b) {
		return File{}, fmt.Errorf("%w: a chunk claims more bytes than the file has", ErrInvalid)
	}
	r := bytes.NewReader(b)
	d := gowav.NewDecoder(r)
	if !d.IsValidFile() {
		return File{}, ErrInvalid
	}
	if err := d.FwdToPCM(); err != nil || d.PCMChunk == nil || d.AvgBytesPerSec == 0 {
		return File{}, ErrInvalid
	}
	// The decoder stops at the samples' start; a truncated file holds fewer
	// than its data chunk says. The length is the data's, not the file's: a
	// LIST chunk is no audio.
	samples := min(int64(d.PCMSize), int64(r.Len()))
	length := time.Duration(samples * int64(time.Second) / int64(d.AvgBytesPerSec))
	if length <= 0 {
		return File{}, fmt.Errorf("%w: it holds no audio", ErrInvalid)
	}
	m := gowav.NewDecoder(bytes.NewReader(b))
	m.ReadMetadata()
	f := File{Length: length}
	if m.Metadata != nil {
		f.Comment = m.Metadata.Comments
	}
	return f, nil
}

// chunksFit says whether every chunk of a RIFF file fits within it, but for
// a truncated data chunk, which ends the file.
func chunksFit(b []byte) bool {
	for at := 12; at+8 <= len(b); {
		id, size := string(b[at:at+4]), int64(binary.LittleEndian.Uint32(b[at+4:at+8]))
		if size > int64(len(b)-at-8) {
			return id == "data"
		}
		at += 8 + int(size+size%2)
	}
	return true
}

// HeaderBytes is the length of Header's header.
const HeaderBytes = 44

// Header is the header of a 16-bit mono PCM WAV file of samples at rate,
// for writers that make the samples as they are sent.
func Header(samples int64, rate int) [HeaderBytes]byte {
	var h [HeaderBytes]byte
	copy(h[:], "RIFF")
	binary.LittleEndian.PutUint32(h[4:], uint32(36+2*samples))
	copy(h[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:], 16) // the fmt chunk's size
	binary.LittleEndian.PutUint16(h[20:], 1)  // PCM
	binary.LittleEndian.PutUint16(h[22:], 1)  // mono
	binary.LittleEndian.PutUint32(h[24:], uint32(rate))
	binary.LittleEndian.PutUint32(h[28:], uint32(2*rate)) // bytes per second
	binary.LittleEndian.PutUint16(h[32:], 2)              // bytes per frame
	binary.LittleEndian.PutUint16(h[34:], 16)             // bits per sample
	copy(h[36:], "data")
	binary.LittleEndian.PutUint32(h[40:], uint32(2*samples))
	return h
}

// Encode writes samples (16-bit mono PCM at rate) as a WAV file whose INFO
// comment is comment ("" for none), with go-audio's encoder.
func Encode(samples []int, rate int, comment string) ([]byte, error) {
	var f memFile
	enc := gowav.NewEncoder(&f, rate, 16, 1, 1)
	if comment != "" {
		enc.Metadata = &gowav.Metadata{Comments: comment}
	}
	buf := &audio.IntBuffer{Format: &audio.Format{NumChannels: 1, SampleRate: rate}, Data: samples, SourceBitDepth: 16}
	if err := enc.Write(buf); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return f.b, nil
}

// memFile is an in-memory io.WriteSeeker, which the encoder needs to write
// the sizes back into the header.
type memFile struct {
	b   []byte
	pos int64
}

func (m *memFile) Write(p []byte) (int, error) {
	if end := m.pos + int64(len(p)); end > int64(len(m.b)) {
		m.b = append(m.b, make([]byte, end-int64(len(m.b)))...)
	}
	n := copy(m.b[m.pos:], p)
	m.pos += int64(n)
	return n, nil
}

func (m *memFile) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += m.pos
	case io.SeekEnd:
		offset += int64(len(m.b))
	}
	if offset < 0 {
		return 0, errors.New("seek before the start")
	}
	m.pos = offset
	return offset, nil
}
