package prober

import (
	"context"
	"time"

	"github.com/llmprobe/llmprobe/lib/clock"
	"github.com/llmprobe/llmprobe/prompt"
)

// ReasonEarlierTurnFailed is why a conversation's later turns were not
// sent: a user whose question failed does not ask the follow-up.
const ReasonEarlierTurnFailed = "an earlier turn of its conversation failed"

// Converse runs one conversation: first is its first turn (scenario,
// traffic, due time); each later turn is due its think time after the answer
// before it, and its latencies count from then. do sends one turn; done
// then gets its result, once the session has taken the answer. It returns
// how many turns were not sent, and why: a failed turn ends the session;
// wait ending (shutdown, the safety brake) stops it between turns, with an
// empty reason the caller fills in.
func Converse(wait context.Context, first Request, session *prompt.Session, do func(Request) *Result, done func(*Result)) (notSent int, reason string) {
	turns, think := first.Scenario.TurnsOf(), time.Duration(0)
	if c := first.Scenario.Conversation; c != nil {
		think = c.ThinkTime.Std()
	}
	pacer := clock.NewPacer()
	defer pacer.Close()
	req := first
	for turn := 1; turn <= turns; turn++ {
		if turn > 1 {
			// A later turn never waits for a burst's concurrency cap: the
			// session holds its slot through the think time.
			req.Sched, req.Released = time.Now().Add(think), time.Time{}
			if !pacer.Until(wait, req.Sched) {
				return turns - turn + 1, ""
			}
		}
		req.Prompt, req.MaxTokens = session.Next()
		res := do(req)
		session.Answered(res.Answer, res.OutputTokens)
		if !req.Scenario.ChecksAnswer() {
			// The whole answer was kept for the next turn only.
			res.Answer = truncate(res.Answer, answerPreview)
		}
		done(res)
		switch res.Outcome {
		case OutcomeSuccess:
		case OutcomeCancelled:
			return turns - turn, "" // llmprobe stopped it: the caller knows why
		default:
			return turns - turn, ReasonEarlierTurnFailed
		}
	}
	return 0, ""
}
