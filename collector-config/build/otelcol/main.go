// Command mcp-otelcol is a minimal OpenTelemetry Collector with exactly the
// components collector-config/ uses (collector.yaml; the scaled topology's
// edge.yaml and gateway.yaml), in the shape the collector builder (ocb)
// generates. Every collector module is pinned to one release: v0.161.0 (core,
// contrib; stable modules at the matching v1.x), the newest release at which the
// filter, transform and tail sampling processors are served. The loadbalancing
// exporter v0.161.0 requires github.com/aws/aws-sdk-go-v2/service/servicediscovery
// v1.48.0, which the module proxy refuses; go.mod requires v1.49.0 (served), which
// minimal version selection takes instead.
package main

import (
	"log"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/otelcol"
)

func main() {
	info := component.BuildInfo{
		Command:     "mcp-otelcol",
		Description: "OpenTelemetry Collector for mcp-otel: OTLP in, traces to Jaeger/Tempo (tail-sampled on gateways, routed by trace id from edges), span metrics and SDK metrics to Prometheus",
		Version:     "0.161.0",
	}
	settings := otelcol.CollectorSettings{
		BuildInfo: info,
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				ProviderFactories: []confmap.ProviderFactory{
					envprovider.NewFactory(),
					fileprovider.NewFactory(),
				},
			},
		},
	}
	if err := otelcol.NewCommand(settings).Execute(); err != nil {
		log.Fatal(err)
	}
}
