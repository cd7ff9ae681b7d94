package wav

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"
)

// pcmWAV is a 16 kHz mono 16-bit WAV whose data chunk declares declared
// bytes and holds present, after the chunks before and before after.
func pcmWAV(declared uint32, present int, before, after []byte) []byte {
	le := binary.LittleEndian
	b := []byte("RIFF\x00\x00\x00\x00WAVEfmt ")
	b = le.AppendUint32(b, 16)
	b = le.AppendUint16(b, 1)     // PCM
	b = le.AppendUint16(b, 1)     // channels
	b = le.AppendUint32(b, 16000) // sample rate
	b = le.AppendUint32(b, 32000) // bytes a second
	b = le.AppendUint16(b, 2)     // block align
	b = le.AppendUint16(b, 16)    // bits a sample
	b = append(b, before...)
	b = append(b, "data"...)
	b = le.AppendUint32(b, declared)
	b = append(b, make([]byte, present)...)
	b = append(b, after...)
	le.PutUint32(b[4:], uint32(len(b)-8))
	return b
}

func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
		want time.Duration
	}{
		{"two seconds", pcmWAV(64000, 64000, nil, nil), 2 * time.Second},
		{"truncated", pcmWAV(64000, 32000, nil, nil), time.Second},
	} {
		c, err := Read(tc.b)
		if err != nil || c.Length != tc.want || c.Comment != "" {
			t.Errorf("%s: %+v, %v; want %s", tc.name, c, err, tc.want)
		}
	}
	huge := []byte("LIST\xf0\xff\xff\xffINFO")
	for name, b := range map[string][]byte{
		"not RIFF":            []byte("ID3\x04 an mp3"),
		"a LIST past the end": pcmWAV(64000, 64000, huge, nil),
		"a last LIST past it": pcmWAV(64000, 64000, nil, huge),
		"no samples":          pcmWAV(0, 0, nil, nil),
	} {
		if _, err := Read(b); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

// Encode writes what Read reads back: the length and the comment; Header
// heads a file Read reads.
func TestEncodeAndHeader(t *testing.T) {
	b, err := Encode(make([]int, 24000), 16000, "ask not")
	if err != nil {
		t.Fatal(err)
	}
	if f, err := Read(b); err != nil || f.Length != 1500*time.Millisecond || f.Comment != "ask not" {
		t.Fatalf("%+v, %v", f, err)
	}
	h := Header(8000, 16000)
	if f, err := Read(append(h[:], make([]byte, 16000)...)); err != nil || f.Length != 500*time.Millisecond || f.Comment != "" {
		t.Fatalf("%+v, %v", f, err)
	}
}

func TestReadComment(t *testing.T) {
	icmt := "ICMT\x0c\x00\x00\x00one two six\x00"
	list := append([]byte("LIST"), binary.LittleEndian.AppendUint32(nil, uint32(4+len(icmt)))...)
	list = append(append(list, "INFO"...), icmt...)
	c, err := Read(pcmWAV(32000, 32000, nil, list))
	if err != nil || c.Comment != "one two six" || c.Length != time.Second {
		t.Errorf("%+v, %v", c, err)
	}
}
