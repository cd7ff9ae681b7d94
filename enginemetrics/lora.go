package enginemetrics

import (
	"strings"
)

// LoRA is what the engine said of its LoRA adapters at the window's end:
// vLLM's vllm:lora_requests_info, whose labels name the adapters of the
// requests running and waiting, and how many it serves at once.
type LoRA struct {
	MaxLoRA string   `json:"max_lora"`
	Running []string `json:"running"`
	Waiting []string `json:"waiting"`
}

// loraInfo is vLLM's series; other families export none.
const loraInfo = "vllm:lora_requests_info"

// loraOf reads the newest of the info series on p (vLLM keeps older label
// sets, set at older times: the value is when each was set); nil without.
func loraOf(p *Page) *LoRA {
	if !p.OK() {
		return nil
	}
	mf := p.families[loraInfo]
	if mf == nil || len(mf.Metric) == 0 {
		return nil
	}
	newest := mf.Metric[0]
	for _, m := range mf.Metric[1:] {
		if gaugeValue(m) > gaugeValue(newest) {
			newest = m
		}
	}
	list := func(label string) []string {
		v, _ := labelValue(newest, label)
		if v == "" {
			return nil
		}
		return strings.Split(v, ",")
	}
	max, _ := labelValue(newest, "max_lora")
	return &LoRA{MaxLoRA: max, Running: list("running_lora_adapters"), Waiting: list("waiting_lora_adapters")}
}
