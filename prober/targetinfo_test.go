package prober

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/lib/redact"
	"github.com/llmprobe/llmprobe/sim"
)

func serverAt(url string) infoServer {
	return infoServer{HTTP: http.DefaultClient, Base: url, Redact: redact.New()}
}

// Each engine's version endpoint, asked first for the engine owned_by names.
func TestEngineVersionEndpoints(t *testing.T) {
	cases := []struct {
		ownedBy, path, body, engine, version string
	}{
		{"vllm", "/version", `{"version":"0.11.2"}`, engineVLLM, "0.11.2"},
		{"sglang", "/get_server_info", `{"version":"0.5.4","tp_size":1}`, engineSGLang, "0.5.4"},
		{"tgi", "/info", `{"model_id":"m","version":"3.3.6"}`, engineTGI, "3.3.6"},
		{"llamacpp", "/props", `{"build_info":"b6915-a1b2c3d","total_slots":4}`, engineLlamaCPP, "b6915-a1b2c3d"},
		{"library", "/api/version", `{"version":"0.12.3"}`, engineOllama, "0.12.3"},
	}
	for _, tc := range cases {
		t.Run(tc.engine, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/v1/models":
					fmt.Fprintf(w, `{"data":[{"id":"m","owned_by":%q}]}`, tc.ownedBy)
				case tc.path:
					fmt.Fprint(w, tc.body)
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			info := serverAt(srv.URL).Read(t.Context())
			if info.Engine != tc.engine || info.EngineVersion != tc.version {
				t.Errorf("engine %q %q, want %q %q", info.Engine, info.EngineVersion, tc.engine, tc.version)
			}
		})
	}
}

// The sim posing as each engine family is recognised as that engine, the
// way the real one would be (TGI only by its /info).
func TestTargetInfoFromSimFamilies(t *testing.T) {
	want := map[string]string{sim.EngineVLLM: engineVLLM, sim.EngineSGLang: engineSGLang, sim.EngineTGI: engineTGI, sim.EngineLlamaCPP: engineLlamaCPP}
	for _, family := range sim.Engines {
		t.Run(family, func(t *testing.T) {
			srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.Engine, c.Version = family, "9.8.7" })
			info := serverAt(srv.URL).Read(t.Context())
			if info.Engine != want[family] || info.EngineVersion != "9.8.7" {
				t.Errorf("engine %q %q, want %q 9.8.7", info.Engine, info.EngineVersion, want[family])
			}
		})
	}
}

// A /v1/models that fails gives only why: its status and the server's
// message, masked; the caller keeps what it knew beside them.
func TestReadFailure(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"no access for sk-secret-0123"}}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	s := serverAt(srv.URL)
	s.Redact.Add([]string{"sk-secret-0123"})
	info := s.Read(t.Context())
	if !info.Confirmed.IsZero() || info.Engine != "" || info.ModelsStatus != http.StatusUnauthorized ||
		info.ModelsError != "GET /v1/models: HTTP 401 Unauthorized: no access for <secret>" {
		t.Errorf("info %+v", info)
	}
	if _, err := s.Models(t.Context()); err == nil || strings.Contains(err.Error(), "sk-secret") {
		t.Errorf("models: %v", err)
	}
}

// TEI lists no /v1/models: its /info (model_type, no router) names the
// model and the version; a TGI-shaped /info behind a missing /v1/models
// is no TEI.
func TestTEIFromInfo(t *testing.T) {
	t.Run("sim", func(t *testing.T) {
		srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.Engine, c.Version = sim.EngineTEI, "1.8.2" })
		info := serverAt(srv.URL).Read(t.Context())
		if info.Engine != engineTEI || info.EngineVersion != "1.8.2" || len(info.Models) != 1 || info.Models[0] != "m" || info.Confirmed.IsZero() {
			t.Errorf("info %+v, want tei 1.8.2 serving m", info)
		}
	})
	for _, tc := range []struct{ name, info, engine string }{
		// TEI 1.8's /info as its router serialises it.
		{"tei", `{"model_id":"BAAI/bge-reranker-v2-m3","model_sha":null,"model_dtype":"float16","model_type":{"reranker":{"id2label":{"0":"LABEL_0"},"label2id":{"LABEL_0":0}}},"max_concurrent_requests":512,"max_input_length":8192,"max_batch_tokens":16384,"max_batch_requests":null,"max_client_batch_size":32,"auto_truncate":false,"tokenization_workers":8,"version":"1.8.0","sha":"abc","docker_label":null}`, engineTEI},
		{"tgi", `{"model_id":"m","router":"text-generation-router","version":"3.3.6"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/info" {
					fmt.Fprint(w, tc.info)
					return
				}
				http.NotFound(w, r)
			}))
			defer srv.Close()
			info := serverAt(srv.URL).Read(t.Context())
			if info.Engine != tc.engine || (tc.engine == "" && info.ModelsStatus != http.StatusNotFound) {
				t.Errorf("info %+v, want engine %q", info, tc.engine)
			}
		})
	}
}
