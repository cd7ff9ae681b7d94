package sim

import "github.com/llmprobe/llmprobe/sim/internal/truth"

// TruthRecord is what GET /sim/truth returns: per request id (the client's
// X-Request-Id, else the response id), the Unix nanoseconds at which each
// output chunk was handed to the connection, and the request's receipt.
type TruthRecord = truth.Record

// Receipt is when the engine accepted a request's connection and when it
// had read the request whole, in Unix nanoseconds.
type Receipt = truth.Receipt
