package prober

// Observer receives every finished result (metrics, history).
type Observer interface {
	Observe(*Result)
}

// InFlight is told when a request starts and ends.
type InFlight interface {
	Started(target, scenario, traffic string)
	Finished(target, scenario, traffic string)
}
