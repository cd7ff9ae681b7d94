package report

import "github.com/llmprobe/llmprobe/report/turns"

// TurnSummary is one turn of a conversation scenario's sessions (turns.Summary).
type TurnSummary = turns.Summary

// PromptCache is what the engine's prefix cache served (turns.PromptCache).
type PromptCache = turns.PromptCache
