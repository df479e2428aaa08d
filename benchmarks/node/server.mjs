// The stdio server of the Node benchmark: the echo McpServer of one SDK generation, as one
// variant (bare, floor, mcp-otel), on the same OpenTelemetry SDK as its client.
//
//   node server.mjs <sdk 1|2> <variant> [verify]
//
// Verify mode keeps its spans in memory and adds a tool, `__telemetry`, that answers them and
// its points (the benchmark's check that the floor records what mcp-otel records).
import { echoServer, floor as makeFloor, instrumentFor, mcpSdk, telemetry } from './common.mjs';

const [sdk, variant, mode] = process.argv.slice(2);
const verify = mode === 'verify';
const otel = telemetry({ verify });
instrumentFor(variant, sdk, otel);
const floor = variant === 'floor' ? makeFloor({ sdk, transport: 'stdio' }) : undefined;
const server = echoServer(sdk, floor);
if (verify) {
  server.registerTool('__telemetry', { description: 'What this server recorded.' }, async () => {
    await otel.flush();
    return { content: [{ type: 'text', text: JSON.stringify({ spans: otel.spans(), points: await otel.points() }) }] };
  });
}
const { StdioServerTransport } = mcpSdk(sdk);
await server.connect(new StdioServerTransport());
// The client closing our stdin ends us at once (and a --cpu-prof profile is written).
process.stdin.once('end', () => process.exit(0));
