package sim

import "github.com/llmprobe/llmprobe/sim/internal/truth"

// TruthRecord is what GET /sim/truth returns: per request id (the client's
// X-Request-Id, else the response id), the Unix nanoseconds at which each
// output chunk was handed to the connection, and the request's receipt
// (when the engine accepted its connection and read it whole).
type TruthRecord = truth.Record
