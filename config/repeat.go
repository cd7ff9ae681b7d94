package config

// MaxRepeat bounds a burst's repeat: every run sends the whole burst.
const MaxRepeat = 30

func (b *Burst) validateRepeat(path string, errs *FieldErrors) {
	errs.IntWithin(path+".repeat", b.Repeat, 0, MaxRepeat, "runs (0 and 1 run once; 3 give a mean's interval)")
	if b.Repeat > 1 && b.Sweep != nil {
		errs.Add(path+".repeat", "repeats one rate; a sweep steps through rates: set one of them")
	}
}
