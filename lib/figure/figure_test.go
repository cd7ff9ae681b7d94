package figure

import "testing"

func TestFigures(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Ms(0.10960021523999987), "109.6ms"},
		{Ms(1.5), "1500.0ms"},
		{Ms(-0.00001), "0.0ms"},
		{Ms(-0.0002), "-0.2ms"},
		{PageMs(0.118), "118.0 ms"},
		{PageMs(0.0000008), "0.8 µs"},
		{PageMs(0), "0.0 ms"},
		{Percent(1), "100.0%"},
		{Percent(0.99549), "99.5%"},
		{Percent(-0.0001), "0.0%"},
		{SignedPercent(0.009), "+0.9%"},
		{SignedPercent(0.0001), "0.0%"},
		{SignedPercent(-0.0001), "0.0%"},
		{SignedPercent(-0.032), "-3.2%"},
		{P(0.94), "p=0.94"},
		{P(0.00025), "p=0.00025"},
		{P(6.8e-08), "p<0.0001"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}
