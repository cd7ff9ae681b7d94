// Command otelcol is an OpenTelemetry Collector of two components, the OTLP
// receiver and the file exporter, built from the module proxy so the
// tracing test sends llmprobe's spans to the real thing.
package main

import (
	"log"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

func factories() (otelcol.Factories, error) {
	var f otelcol.Factories
	var err error
	if f.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory()); err != nil {
		return f, err
	}
	f.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](fileexporter.NewFactory())
	f.Telemetry = otelconftelemetry.NewFactory()
	return f, err
}

func main() {
	settings := otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{Command: "otelcol", Description: "llmprobe's test collector", Version: "test"},
		Factories: factories,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory()},
			DefaultScheme:     "file",
		}},
	}
	if err := otelcol.NewCommand(settings).Execute(); err != nil {
		log.Fatal(err)
	}
}
